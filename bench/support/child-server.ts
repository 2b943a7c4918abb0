// Starts a benchmark server in its own process (so the load generator does not share its event
// loop) and stops it cleanly, which lets `--cpu-prof` write its profile on the way out.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';

export interface ChildServer {
  url: string;
  pid: number;
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  /** Sends `message` and answers the first message back whose `type` is `answerType`. */
  ask<Answer>(message: string, answerType: string): Promise<Answer>;
  stop(): Promise<void>;
}

export interface ReadyMessage { type: 'ready'; port: number }
interface CpuMessage { type: 'cpu'; micros: number }

/**
 * `script` is relative to dist/bench/servers, e.g. 'ours.js'. The server's standard output is
 * dropped unless `onStdout` takes it (where V8's `--trace-gc-nvp` writes).
 */
export async function startChildServer(
  script: string, args: string[], execArgv: string[] = [], onStdout?: (text: string) => void,
): Promise<ChildServer> {
  const path = fileURLToPath(new URL(`../servers/${script}`, import.meta.url));
  const child = fork(path, args, { execArgv, stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'inherit', 'ipc'] });
  if (onStdout) child.stdout?.setEncoding('utf8').on('data', onStdout);
  const port = await portOnceReady(child, script, 20_000);
  return {
    url: `http://127.0.0.1:${port}`, pid: child.pid!, cpuMicros: () => cpuOf(child), ask: (message, type) => ask(child, message, type),
    stop: () => stopChild(child),
  };
}

/**
 * The port a forked server (serveUntilStopped below) announces; rejects if it exits first or
 * takes longer than `withinMs`, with `exitDetail()` (say, the end of its stderr) after the exit code.
 */
export function portOnceReady(child: ChildProcess, script: string, withinMs: number, exitDetail: () => string = () => ''): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within ${withinMs / 1000} s`)), withinMs);
    child.on('message', (message: ReadyMessage) => {
      if (message?.type === 'ready') { clearTimeout(timer); resolve(message.port); }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      const detail = exitDetail();
      reject(new Error(`${script} exited with code ${code} before it was ready${detail ? `: ${detail}` : ''}`));
    });
  });
}

function ask<Answer>(child: ChildProcess, message: string, answerType: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: { type?: string }) => {
      if (answer?.type !== answerType) return;
      child.off('message', onMessage);
      resolve(answer as Answer);
    };
    child.on('message', onMessage);
    if (!child.send(message)) reject(new Error('the server process is gone'));
  });
}

function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: CpuMessage) => {
      if (message?.type !== 'cpu') return;
      child.off('message', onMessage);
      resolve(message.micros);
    };
    child.on('message', onMessage);
    if (!child.send('cpu')) reject(new Error('the server process is gone'));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.send('stop');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** For the server side: announce the port, and stop when the parent says so or goes away. */
export function serveUntilStopped(port: number, stop: () => Promise<void>): void {
  const finish = () => void stop().finally(() => process.exit(0));
  process.on('message', (message) => {
    if (message === 'stop') finish();
    if (message === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.({ type: 'cpu', micros: usage.user + usage.system } satisfies CpuMessage);
    }
  });
  process.on('disconnect', finish);
  process.send?.({ type: 'ready', port } satisfies ReadyMessage);
}

/**
 * For a node:http baseline: listens on a free loopback port, then serves until stopped; on stop,
 * open connections are cut and `closed` runs once the server has closed (a database to close).
 */
export function listenUntilStopped(server: Server, closed: () => void = () => undefined): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    serveUntilStopped(typeof address === 'object' && address ? address.port : 0, () =>
      new Promise((resolve) => { server.close(() => { closed(); resolve(); }); server.closeAllConnections(); }));
  });
}
