// A Docker engine that stops answering on purpose, standing in for a stuck one: an HTTP proxy
// on a unix socket that forwards every call to the real test engine, except the calls the
// test names. Those it reads and leaves without an answer ('silent'), answers with headers and
// then nothing ('quiet-body'), or leaves unread ('unread': an upload the engine stops taking).
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEngineAddress } from '../../../../src/engine/docker/engine-address.js';
import { TEST_DOCKER_HOST } from './docker-engine.js';

export interface Stall {
  method: string;
  /** Matched against the path without the API version prefix, e.g. /containers/create. */
  path: RegExp;
  how: 'silent' | 'quiet-body' | 'unread';
}

export class StallingEngine {
  /** The call to stall, or null to forward everything. */
  stall: Stall | null = null;
  /** "METHOD /path" of every call stalled so far. */
  readonly stalled: string[] = [];
  private readonly held = new Set<ServerResponse>();
  private readonly server = createServer((req, res) => this.handle(req, res));
  private readonly upstream = upstreamOf(TEST_DOCKER_HOST);

  /** Listens on a unix socket of its own (as a local engine does; plain TCP engines need TLS); its engine address. */
  async start(): Promise<string> {
    const socketPath = join(mkdtempSync(join(tmpdir(), 'teaminfra-stalling-')), 'docker.sock');
    await new Promise<void>((resolve) => this.server.listen(socketPath, resolve));
    return `unix://${socketPath}`;
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves once a call was stalled (or after `timeoutMs`, rejecting). */
  async waitForStall(timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.stalled.length === 0) {
      if (Date.now() > deadline) throw new Error(`no call was stalled within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.stalled[0] as string;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0]?.replace(/^\/v[\d.]+/, '') ?? '';
    const stall = this.stall;
    if (stall && stall.method === req.method && stall.path.test(path)) {
      this.stalled.push(`${req.method} ${path}`);
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      if (stall.how === 'unread') {
        req.pause();
        return;
      }
      req.resume();
      if (stall.how === 'quiet-body') res.writeHead(200, { 'content-type': 'application/x-tar' }).flushHeaders();
      return;
    }
    const forwarded = request({ ...this.upstream, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  }
}

function upstreamOf(host: string): { socketPath: string } | { host: string; port: number } {
  const address = parseEngineAddress(host);
  if (address.kind === 'unix') return { socketPath: address.socketPath };
  if (address.kind === 'tcp' && !address.tls) return { host: address.host, port: address.port };
  throw new Error(`the stalling engine forwards to a unix socket or plain TCP engine, not ${host}`);
}
