// The command line as a client of the REST API and the OAuth server (undici). A refusal becomes
// an error carrying the server's own sentence, which main.ts prints before exiting non-zero.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { request } from 'undici';
import { readCredentials } from './credentials-file.js';

export const USER_AGENT = `teaminfra-cli/0.1.0 (${hostname()})`;

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** An answer the command cannot go on with; the message is the server's sentence when it gave one. */
export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code?: string) {
    super(message);
  }
}

export async function send(
  url: string,
  options: { method?: 'GET' | 'POST'; token?: string; json?: object; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': USER_AGENT, ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  let response;
  try {
    response = await request(url, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  } catch (error) {
    throw new ApiError(`Could not reach ${new URL(url).origin}: ${(error as Error).message}.`, 0);
  }
  const text = await response.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: response.statusCode, headers: response.headers, body: parsed };
}

/** A REST call that must succeed (2xx); anything else throws with the problem's sentence. */
export async function callApi(base: string, token: string, method: 'GET' | 'POST', path: string, json?: object): Promise<ApiResponse> {
  const headers: Record<string, string> = method === 'POST' ? { 'Idempotency-Key': randomUUID() } : {};
  const response = await send(base + path, { method, token, json: json ?? (method === 'POST' ? {} : undefined), headers });
  if (response.status >= 200 && response.status < 300) return response;
  const problem = response.body as { detail?: string; code?: string } | undefined;
  if (response.status === 401) {
    throw new ApiError(`${problem?.detail ?? 'The token was refused.'} Run "teaminfra login --url ${base}" to sign in again.`, 401, problem?.code);
  }
  throw new ApiError(problem?.detail ?? `${method} ${path} answered ${response.status}.`, response.status, problem?.code);
}

/** The server and token to use: TEAMINFRA_TOKEN (with --url or TEAMINFRA_URL), else `teaminfra login`'s. */
export function apiTarget(urlOption: string | undefined, env: NodeJS.ProcessEnv = process.env): { base: string; token: string } {
  // Empty counts as unset, as in a shell's `TEAMINFRA_URL= teaminfra ...`.
  const url = urlOption || env.TEAMINFRA_URL || undefined;
  if (env.TEAMINFRA_TOKEN) {
    if (!url) throw new ApiError('TEAMINFRA_TOKEN is set: give the server with --url or TEAMINFRA_URL.', 0);
    return { base: url.replace(/\/+$/, ''), token: env.TEAMINFRA_TOKEN };
  }
  const credentials = readCredentials();
  if (!credentials) throw new ApiError('Not signed in: run "teaminfra login --url BASE" first, or set TEAMINFRA_TOKEN.', 0);
  return { base: (url ?? credentials.url).replace(/\/+$/, ''), token: credentials.token };
}
