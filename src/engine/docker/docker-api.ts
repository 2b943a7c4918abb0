// A small client of the Docker Engine API over undici (already our HTTP client): the handful
// of endpoints the driver uses, each call bounded in time, every failure turned into a
// sentence that names the engine and the call. We chose undici over dockerode: it speaks to a
// unix socket and to TLS directly, streams request and response bodies (image import, archives)
// without buffering, and keeps docker-modem's ssh2 and its native optional build out of the
// install; SSH goes through the system's own `ssh` as the Docker CLI does (ssh-tunnel.ts).
//
// Connections: short calls share a pool of connections per engine; a call that streams (an
// archive, an image, a log) gets a connection of its own, closed with its stream. One shared
// connection once deadlocked a copy: its archive stream, not yet read, held the connection
// that the next call (creating the helper that reads it) waited for.
//
// Deadlines: a short call has one for the whole call, queueing included; a streaming call has
// one for its answer to begin and one on silence (no byte moved for that long), never on its
// length, so a large archive may take as long as it keeps moving.
import { Readable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { Client, Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import type { EngineAddress } from './engine-address.js';
import { openSshTunnel, type SshTunnel } from './ssh-tunnel.js';
import { watchForSilence } from './silence-watch.js';

/** Pinned so that the answers' shape does not depend on the engine's version (20.10 speaks 1.41). */
const API_PREFIX = '/v1.41';

/** How many short calls one engine serves at once from this process; more wait their turn (within their deadline). */
const POOLED_CONNECTIONS = 16;

/** The default deadline of an engine call (TEAMINFRA_ENGINE_CALL_TIMEOUT_MS): a short call's whole time, a stream's silence. */
export function engineCallTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.TEAMINFRA_ENGINE_CALL_TIMEOUT_MS);
  return Number.isInteger(value) && value > 0 ? value : 30_000;
}

export class DockerError extends Error {
  /** The engine's own message, for a caller that tells its causes apart (an image pull's registry answer). */
  readonly engineMessage: string | undefined;
  /** The engine stayed silent past the deadline (rather than refusing, or the connection failing). */
  readonly timedOut: boolean;

  constructor(readonly reason: string, readonly status: number | null, options?: { cause?: unknown; engineMessage?: string; timedOut?: boolean }) {
    super(reason, options);
    this.engineMessage = options?.engineMessage;
    this.timedOut = options?.timedOut ?? false;
  }
}

export interface CallOptions {
  query?: Record<string, string | number | boolean | string[] | undefined>;
  body?: unknown;
  /** Statuses that are an answer rather than an error (e.g. 404 for "absent", 304 "already so"). */
  accept?: number[];
  /** A short call: the longest it may take in all. A stream or an upload: the longest it may stay silent. */
  timeoutMs?: number;
  /** Sent as they are (X-Registry-Auth for a pull); never part of a failure's sentence. */
  headers?: Record<string, string>;
}

type ConnectionOptions = Pick<Client.Options, 'socketPath' | 'connect' | 'connectTimeout'>;

export class DockerApi {
  private pool: Pool | undefined;
  private readonly streaming = new Set<Client>();
  private connection: Promise<{ origin: string; options: ConnectionOptions }> | undefined;
  private tunnel: Promise<SshTunnel> | undefined;

  constructor(readonly address: EngineAddress, readonly defaultTimeoutMs = engineCallTimeoutFromEnv()) {}

  /** Fails within `timeoutMs` with a sentence when the engine does not answer. */
  async ping(timeoutMs = 5_000): Promise<{ apiVersion: string; version: string; os: string; arch: string }> {
    const version = await this.json<{ ApiVersion: string; Version: string; Os: string; Arch: string }>('GET', '/version', { timeoutMs });
    return { apiVersion: version.ApiVersion, version: version.Version, os: version.Os, arch: version.Arch };
  }

  async json<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const pool = await this.pooled(method, path, timeoutMs);
    const deadline = AbortSignal.timeout(timeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await pool.request({ ...this.requestOf(method, path, options), headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: deadline });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw this.unreachable(method, path, timeoutMs, error);
    }
    if (status >= 400 && !(options.accept ?? []).includes(status)) throw this.failure(method, path, status, messageOf(text));
    // An accepted error status (say 404 for "absent") reads as undefined, like an empty answer.
    if (status >= 300 || text === '') return undefined as T;
    return JSON.parse(text) as T;
  }

  /** A call whose answer is a stream (an archive of files); the caller must consume or destroy it. */
  async stream(method: string, path: string, options: CallOptions = {}): Promise<Readable> {
    const { body } = await this.streamingCall(method, path, options);
    const failure = (error: unknown) => this.unreachable(method, path, options.timeoutMs ?? this.defaultTimeoutMs, error);
    // Through an iterator: a caller that destroys the stream early ends the call without the
    // abort error undici's body would emit with no one listening, and a stream that fails
    // (silence past its deadline) fails with the sentence that names the engine and the call.
    async function* relayed(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of body) yield chunk as Buffer;
      } catch (error) {
        throw failure(error);
      }
    }
    return Readable.from(relayed(), { objectMode: false });
  }

  /** Sends a stream (an archive, an image) and reads the JSON or text answer. */
  async upload(method: string, path: string, body: Readable | Buffer, contentType: string, options: CallOptions = {}): Promise<string> {
    const idleMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const { body: answer } = await this.streamingCall(method, path, { ...options, body: undefined }, { body, contentType, idleMs });
    try {
      return await answer.text();
    } catch (error) {
      throw this.unreachable(method, path, idleMs, error);
    }
  }

  /** Closes the connections once their calls are done. */
  async close(): Promise<void> {
    await this.pool?.close().catch(() => undefined);
    this.pool = undefined;
    this.closeTunnel();
  }

  /** Ends every connection now: calls in flight fail. For a process that stops without waiting for them. */
  async destroy(): Promise<void> {
    await Promise.all([this.pool, ...this.streaming].map((dispatcher) => dispatcher?.destroy().catch(() => undefined)));
    this.pool = undefined;
    this.streaming.clear();
    this.closeTunnel();
  }

  /**
   * One call on a connection of its own, closed when the answer's body ends; `upload` sends a
   * body, watched for silence as it is read. The answer's body is watched for silence by undici.
   */
  private async streamingCall(
    method: string, path: string, options: CallOptions, upload?: { body: Readable | Buffer; contentType: string; idleMs: number },
  ): Promise<{ status: number; body: Dispatcher.ResponseData['body'] }> {
    const idleMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const { origin, options: connection } = await this.connectionOptions(method, path, idleMs);
    const client = new Client(origin, { ...connection, pipelining: 1 });
    this.streaming.add(client);
    const release = () => {
      this.streaming.delete(client);
      void client.destroy().catch(() => undefined);
    };
    const aborter = new AbortController();
    const sent = upload ? watchForSilence(upload.body, upload.idleMs, () => aborter.abort(new SilentError())) : undefined;
    // Without a body to send, the answer must begin in time; with one, undici's headersTimeout
    // counts from the body's end, and until then the body's silence is what is watched.
    const beginDeadline = upload ? undefined : setTimeout(() => aborter.abort(new SilentError()), idleMs);
    let response: Dispatcher.ResponseData;
    try {
      const request = this.requestOf(method, path, options, upload ? { body: sent?.body, contentType: upload.contentType } : undefined);
      response = await client.request({ ...request, headersTimeout: idleMs, bodyTimeout: idleMs, signal: aborter.signal });
    } catch (error) {
      release();
      throw this.unreachable(method, path, idleMs, aborter.signal.reason ?? error);
    } finally {
      clearTimeout(beginDeadline);
      sent?.stop();
    }
    response.body.once('close', release);
    if (response.statusCode >= 400) {
      const text = await response.body.text().catch(() => '');
      throw this.failure(method, path, response.statusCode, messageOf(text));
    }
    return { status: response.statusCode, body: response.body };
  }

  private requestOf(method: string, path: string, options: CallOptions, raw?: { body: Readable | Buffer | undefined; contentType: string }) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) {
      for (const each of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(key, String(each));
    }
    const search = query.size > 0 ? `?${query}` : '';
    const body = raw ? raw.body : options.body === undefined ? undefined : JSON.stringify(options.body);
    const type = raw ? raw.contentType : options.body === undefined ? undefined : 'application/json';
    return {
      method: method as Dispatcher.HttpMethod, path: `${API_PREFIX}${path}${search}`, body,
      headers: { ...options.headers, host: 'docker', ...(type ? { 'content-type': type } : {}) },
    };
  }

  private async pooled(method: string, path: string, timeoutMs: number): Promise<Pool> {
    if (this.pool) return this.pool;
    const { origin, options } = await this.connectionOptions(method, path, timeoutMs);
    this.pool ??= new Pool(origin, { ...options, connections: POOLED_CONNECTIONS, pipelining: 1 });
    return this.pool;
  }

  private connectionOptions(method: string, path: string, timeoutMs: number): Promise<{ origin: string; options: ConnectionOptions }> {
    this.connection ??= this.resolveConnection().catch((error: unknown) => {
      this.connection = undefined;
      throw error;
    });
    return this.connection.catch((error: unknown) => {
      if (error instanceof DockerError) throw error;
      throw this.unreachable(method, path, timeoutMs, error);
    });
  }

  private async resolveConnection(): Promise<{ origin: string; options: ConnectionOptions }> {
    const { address } = this;
    const connectTimeout = Math.min(this.defaultTimeoutMs, 10_000);
    if (address.kind === 'unix') return { origin: 'http://docker', options: { socketPath: address.socketPath, connectTimeout } };
    if (address.kind === 'tcp') {
      const origin = `${address.tls ? 'https' : 'http'}://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
      const tls = address.tls && { ca: readFileSync(address.tls.ca), cert: readFileSync(address.tls.cert), key: readFileSync(address.tls.key) };
      return { origin, options: { connectTimeout, ...(tls ? { connect: tls } : {}) } };
    }
    this.tunnel ??= openSshTunnel(address);
    const tunnel = await this.tunnel.catch((error: unknown) => {
      this.tunnel = undefined;
      throw new DockerError(`The Docker engine at ${address.text} cannot be reached over SSH: ${(error as Error).message}`, null, { cause: error });
    });
    return { origin: 'http://docker', options: { socketPath: tunnel.socketPath, connectTimeout } };
  }

  private closeTunnel(): void {
    const { tunnel } = this;
    this.tunnel = undefined;
    this.connection = undefined;
    void tunnel?.then((open) => open.close(), () => undefined);
  }

  private failure(method: string, path: string, status: number, message: string): DockerError {
    return new DockerError(`The Docker engine at ${this.address.text} refused ${method} ${path.split('?')[0]} (${status}): ${message}`, status,
      { engineMessage: message });
  }

  private unreachable(method: string, path: string, timeoutMs: number, error: unknown): DockerError {
    if (error instanceof DockerError) return error;
    const code = (error as { code?: string }).code ?? '';
    const call = `${method} ${path.split('?')[0]}`;
    const timedOut = error instanceof SilentError || error instanceof undiciErrors.ConnectTimeoutError ||
      error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError ||
      (error as { name?: string }).name === 'TimeoutError';
    if (timedOut) {
      return new DockerError(`The Docker engine at ${this.address.text} did not answer ${call} within ${seconds(timeoutMs)}. ` +
        'Check that dockerd runs there and is not overloaded; the step can be tried again.', null, { cause: error, timedOut: true });
    }
    const why = code === 'ENOENT' ? 'its socket does not exist'
      : code === 'ECONNREFUSED' ? 'the connection was refused'
        : code === 'EACCES' ? 'permission to its socket was denied'
          : error instanceof undiciErrors.ClientDestroyedError || error instanceof undiciErrors.RequestAbortedError ? 'the connection was closed'
            : `${code || 'the connection failed'}`;
    return new DockerError(`The Docker engine at ${this.address.text} does not answer (${why}), so ${call} could not be made. ` +
      'Check that dockerd runs there and that this control plane may reach it.', null, { cause: error });
  }
}

/** An upload whose body stopped moving, or an answer that did not begin, within the deadline. */
class SilentError extends Error {
  override readonly name = 'SilentError';
}

/** A deadline in words: "30 s", "2.5 s". */
export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
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
