// A small client of the Docker Engine API over undici (already our HTTP client): the handful
// of endpoints the driver uses, each call bounded in time, every failure turned into a
// sentence that names the engine. We chose undici over dockerode: it speaks to a unix socket
// and to TLS directly, streams request and response bodies (image import, archives) without
// buffering, and keeps docker-modem's ssh2 and its native optional build out of the install;
// SSH goes through the system's own `ssh` as the Docker CLI does (ssh-tunnel.ts).
import { Readable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { Client, errors as undiciErrors } from 'undici';
import type { EngineAddress } from './engine-address.js';
import { openSshTunnel, type SshTunnel } from './ssh-tunnel.js';

/** Pinned so that the answers' shape does not depend on the engine's version (20.10 speaks 1.41). */
const API_PREFIX = '/v1.41';

export class DockerError extends Error {
  constructor(readonly reason: string, readonly status: number | null, options?: { cause?: unknown }) {
    super(reason, options);
  }
}

export interface CallOptions {
  query?: Record<string, string | number | boolean | string[] | undefined>;
  body?: unknown;
  /** Statuses that are an answer rather than an error (e.g. 404 for "absent", 304 "already so"). */
  accept?: number[];
  timeoutMs?: number;
}

export class DockerApi {
  private client: Client | undefined;
  private tunnel: Promise<SshTunnel> | undefined;

  constructor(readonly address: EngineAddress, private readonly defaultTimeoutMs = 30_000) {}

  /** Fails within `timeoutMs` with a sentence when the engine does not answer. */
  async ping(timeoutMs = 5_000): Promise<{ apiVersion: string; version: string; os: string; arch: string }> {
    const version = await this.json<{ ApiVersion: string; Version: string; Os: string; Arch: string }>('GET', '/version', { timeoutMs });
    return { apiVersion: version.ApiVersion, version: version.Version, os: version.Os, arch: version.Arch };
  }

  async json<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const { status, text } = await this.call(method, path, options);
    // An accepted error status (say 404 for "absent") reads as undefined, like an empty answer.
    if (status >= 300 || text === '') return undefined as T;
    return JSON.parse(text) as T;
  }

  /** A call whose answer is a stream (an archive of files); the caller must consume or destroy it. */
  async stream(method: string, path: string, options: CallOptions = {}): Promise<Readable> {
    const client = await this.connect();
    const response = await this.send(client, method, path, options);
    if (response.statusCode >= 400) {
      const text = await response.body.text().catch(() => '');
      throw this.failure(method, path, response.statusCode, messageOf(text));
    }
    return Readable.from(response.body);
  }

  /** Sends a stream (an archive, an image) and reads the JSON or text answer. */
  async upload(method: string, path: string, body: Readable | Buffer, contentType: string, options: CallOptions = {}): Promise<string> {
    const client = await this.connect();
    const response = await this.send(client, method, path, { ...options, body: undefined }, body, contentType);
    const text = await response.body.text();
    if (response.statusCode >= 400) throw this.failure(method, path, response.statusCode, messageOf(text));
    return text;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = undefined;
    if (this.tunnel) (await this.tunnel.catch(() => undefined))?.close();
    this.tunnel = undefined;
  }

  private async call(method: string, path: string, options: CallOptions): Promise<{ status: number; text: string }> {
    const client = await this.connect();
    const response = await this.send(client, method, path, options);
    const text = await response.body.text();
    if (response.statusCode >= 400 && !(options.accept ?? []).includes(response.statusCode)) {
      throw this.failure(method, path, response.statusCode, messageOf(text));
    }
    return { status: response.statusCode, text };
  }

  private async send(client: Client, method: string, path: string, options: CallOptions, rawBody?: Readable | Buffer, contentType?: string) {
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) {
      for (const each of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(key, String(each));
    }
    const search = query.size > 0 ? `?${query}` : '';
    const body = rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const type = contentType ?? (options.body === undefined ? undefined : 'application/json');
    try {
      return await client.request({
        method: method as 'GET', path: `${API_PREFIX}${path}${search}`, body,
        headers: { host: 'docker', ...(type ? { 'content-type': type } : {}) },
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
      });
    } catch (error) {
      throw this.unreachable(error);
    }
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    const { address } = this;
    const connectTimeout = Math.min(this.defaultTimeoutMs, 10_000);
    if (address.kind === 'unix') {
      this.client = new Client('http://docker', { socketPath: address.socketPath, connectTimeout, pipelining: 0 });
    } else if (address.kind === 'tcp') {
      const origin = `${address.tls ? 'https' : 'http'}://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
      const tls = address.tls && { ca: readFileSync(address.tls.ca), cert: readFileSync(address.tls.cert), key: readFileSync(address.tls.key) };
      this.client = new Client(origin, { connectTimeout, pipelining: 0, ...(tls ? { connect: tls } : {}) });
    } else {
      this.tunnel ??= openSshTunnel(address);
      const tunnel = await this.tunnel.catch((error: unknown) => {
        this.tunnel = undefined;
        throw new DockerError(`The Docker engine at ${address.text} cannot be reached over SSH: ${(error as Error).message}`, null, { cause: error });
      });
      this.client = new Client('http://docker', { socketPath: tunnel.socketPath, connectTimeout, pipelining: 0 });
    }
    return this.client;
  }

  private failure(method: string, path: string, status: number, message: string): DockerError {
    return new DockerError(`The Docker engine at ${this.address.text} refused ${method} ${path.split('?')[0]} (${status}): ${message}`, status);
  }

  private unreachable(error: unknown): DockerError {
    const code = (error as { code?: string }).code ?? '';
    const timedOut = error instanceof undiciErrors.ConnectTimeoutError || error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError;
    const why = timedOut ? 'it did not answer in time'
      : code === 'ENOENT' ? 'its socket does not exist'
        : code === 'ECONNREFUSED' ? 'the connection was refused'
          : code === 'EACCES' ? 'permission to its socket was denied'
            : `${code || 'the connection failed'}`;
    return new DockerError(`The Docker engine at ${this.address.text} does not answer (${why}). Check that dockerd runs there ` +
      'and that this control plane may reach it.', null, { cause: error });
  }
}

function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not JSON: the engine's own text.
  }
  return text.trim().slice(0, 300) || 'no message';
}
