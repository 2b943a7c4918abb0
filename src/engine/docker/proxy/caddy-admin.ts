// A client of the proxy's Caddy admin API, reached only through the engine's API. Caddy listens
// for admin requests on a unix socket inside its container (PROXY_ADMIN_SOCKET), on no network:
// no published port, nothing a service container on the proxy's network can connect to, and no
// volume shares it. teaminfra talks to it from any control-plane node, over any kind of engine
// address (unix, tcp+TLS, ssh), with three engine calls per request: the request is put into the
// container as a file (the archive endpoint), an exec runs socat between that file and the
// socket, and the exec's output is the answer. Every call has the engine client's deadlines.
//
// Changes go through POST /load with the whole configuration (caddy-config.ts): Caddy applies it
// in place, keeps its listeners and lets requests in flight finish on the configuration they
// began with. Caddy is never restarted for a change.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pack as tarPack } from 'tar-stream';
import type { DockerApi } from '../docker-api.js';
import { PROXY_ADMIN_SOCKET } from './proxy-image.js';

export class CaddyAdminError extends Error {
  constructor(readonly reason: string, readonly status: number | null) {
    super(reason);
  }
}

export interface AdminAnswer {
  status: number;
  body: string;
}

const REQUEST_DIR = PROXY_ADMIN_SOCKET.slice(0, PROXY_ADMIN_SOCKET.lastIndexOf('/'));
/** Within this the admin API must have answered; a /load that provisions many names takes a few seconds. */
const ADMIN_TIMEOUT_MS = 60_000;

export class CaddyAdmin {
  constructor(private readonly api: DockerApi, readonly container: string) {}

  /**
   * Makes `config` Caddy's whole configuration. Unchanged, it is a no-op; `force` applies it
   * again all the same (Caddy then retries certificates that failed, at once).
   */
  async load(config: unknown, options: { force?: boolean } = {}): Promise<void> {
    const answer = await this.request('POST', '/load', JSON.stringify(config), options.force ? { 'Cache-Control': 'must-revalidate' } : {});
    if (answer.status !== 200) throw this.refused('POST /load', answer);
  }

  /** The configuration Caddy runs now (a path under /config/ for a part of it). */
  async config<T = unknown>(path = '/config/'): Promise<T> {
    const answer = await this.request('GET', path);
    if (answer.status !== 200) throw this.refused(`GET ${path}`, answer);
    return JSON.parse(answer.body) as T;
  }

  /** One admin request: HTTP/1.0, so the answer ends with the connection and is never chunked. */
  async request(method: string, path: string, body = '', headers: Record<string, string> = {}): Promise<AdminAnswer> {
    const head = [`${method} ${path} HTTP/1.0`, 'Host: ', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    const { exitCode, stdout, stderr } = await exchangeInProxy(this.api, this.container, `UNIX-CONNECT:${PROXY_ADMIN_SOCKET}`,
      `${head.join('\r\n')}\r\n\r\n${body}`, ADMIN_TIMEOUT_MS);
    if (exitCode !== 0 || stdout.length === 0) {
      throw new CaddyAdminError(`The proxy's admin API did not answer ${method} ${path} (exit ${exitCode}${stderr ? `: ${stderr.trim().slice(0, 200)}` : ''}).`, null);
    }
    return parseAnswer(stdout);
  }

  private refused(call: string, answer: AdminAnswer): CaddyAdminError {
    const message = (() => {
      try {
        return (JSON.parse(answer.body) as { error?: string }).error ?? answer.body;
      } catch {
        return answer.body;
      }
    })();
    return new CaddyAdminError(`The proxy refused ${call} (${answer.status}): ${message.trim().slice(0, 500)}`, answer.status);
  }
}

/**
 * Sends `text` to `address` (a socat address: the admin socket, or TCP:host:port on the proxy's
 * network) from inside the proxy's container and answers what came back: the request is put
 * into the container as a file, an exec runs socat between that file and the address, and the
 * exec's output is the answer. Three engine calls, over any kind of engine address.
 */
export async function exchangeInProxy(
  api: DockerApi, container: string, address: string, text: string, timeoutMs: number,
): Promise<{ exitCode: number | null; stdout: Buffer; stderr: string }> {
  const file = `request-${randomBytes(8).toString('hex')}`;
  await api.upload('PUT', `/containers/${container}/archive`, textFileTar(file, text), 'application/x-tar', { query: { path: REQUEST_DIR } });
  // shut-none: socat does not half-close the socket when the file ends (Go's server would take
  // that for a client gone); it ends once the other side has answered and closed the connection.
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const script = `socat -t ${seconds} -T ${seconds} "OPEN:$1,rdonly!!STDOUT" "${address},shut-none"; status=$?; rm -f "$1"; exit $status`;
  const exec = await api.json<{ Id: string }>('POST', `/containers/${container}/exec`, {
    body: { AttachStdout: true, AttachStderr: true, User: 'caddy', Cmd: ['sh', '-c', script, 'sh', `${REQUEST_DIR}/${file}`] },
  });
  const output = await api.stream('POST', `/exec/${exec.Id}/start`, { body: { Detach: false, Tty: false }, timeoutMs: timeoutMs + 5_000 });
  const chunks: Buffer[] = [];
  for await (const chunk of output) chunks.push(chunk as Buffer);
  const { stdout, stderr } = splitStreams(Buffer.concat(chunks));
  const state = await api.json<{ ExitCode: number | null }>('GET', `/exec/${exec.Id}/json`);
  return { exitCode: state.ExitCode, stdout, stderr };
}

/**
 * A tar of one small file for the proxy's own directory: readable by Caddy's user, who owns the
 * directory (0700), so by no one else. An exec gets no capability either (the container has
 * none), so it runs as that user too.
 */
export function textFileTar(name: string, text: string): Readable {
  const tar = tarPack();
  tar.entry({ name, mode: 0o644, uid: 0, gid: 0 }, text);
  tar.finalize();
  return Readable.from(tar);
}

/** The exec's output without a TTY: frames of an 8-byte header (1 stdout, 2 stderr; size) and the bytes. */
function splitStreams(buffer: Buffer): { stdout: Buffer; stderr: string } {
  const out: Buffer[] = [];
  let stderr = '';
  for (let offset = 0; offset + 8 <= buffer.length;) {
    const size = buffer.readUInt32BE(offset + 4);
    const frame = buffer.subarray(offset + 8, offset + 8 + size);
    if (buffer[offset] === 2) stderr += frame.toString('utf8');
    else out.push(frame);
    offset += 8 + size;
  }
  return { stdout: Buffer.concat(out), stderr };
}

export function parseAnswer(raw: Buffer): AdminAnswer {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
  if (!Number.isInteger(status)) throw new CaddyAdminError('The proxy\'s admin API gave an answer that is not HTTP.', null);
  return { status, body: end < 0 ? '' : raw.subarray(end + 4).toString('utf8') };
}
