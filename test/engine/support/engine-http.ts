// Helpers for suites that drive the engine over HTTP: send an action, wait for its operation,
// look at a service's address and its processes. Everything is real: HTTP, TCP, /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function send(
  baseUrl: string, method: string, path: string, token: string, body?: object, headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: {
      Accept: 'application/json', Authorization: `Bearer ${token}`,
      ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** Polls GET /api/operations/{id} until the operation has ended. */
export async function waitForOperation(baseUrl: string, token: string, operationId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await send(baseUrl, 'GET', `/api/operations/${operationId}`, token);
    if (status !== 200) throw new Error(`GET /api/operations/${operationId} answered ${status}: ${JSON.stringify(body)}`);
    if (body.state === 'succeeded' || body.state === 'failed') return body;
    if (Date.now() > deadline) throw new Error(`operation ${operationId} still ${body.state} after ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Sends an action and waits for its operation to end. */
export async function act(baseUrl: string, token: string, method: string, path: string, body?: object) {
  const accepted = await send(baseUrl, method, path, token, body);
  if (accepted.status !== 202) throw new Error(`${method} ${path} answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  return waitForOperation(baseUrl, token, accepted.body.id);
}

export async function fetchText(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

/** Resolves with the connection error code, or 'connected'. */
export function tryConnect(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Live processes (Linux /proc) whose command line contains `fragment`, such as a service id. */
export function processesMatching(fragment: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (commandLine.includes(fragment) && state !== 'Z' && Number(entry) !== process.pid) pids.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return pids;
}

/** Safety net for afterAll: kills whatever a suite may have left behind under its data directory. */
export async function killProcessesMatching(fragment: string): Promise<number> {
  const pids = processesMatching(fragment);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  if (pids.length > 0) await sleep(50);
  return pids.length;
}
