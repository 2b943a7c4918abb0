// Runs one of the long database jobs (backup-archive.ts) in a worker thread, so the control
// plane's event loop keeps answering while SQLite copies or checks a large file, or zstd
// compresses one. A job that packs a stream (a Docker service's tar) is fed it on the worker's
// stdin, with the stream's own backpressure.
// A job's problem with the data becomes a DriverError with its sentence; anything else is ours.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import { DriverError } from '../driver.js';
import { compiledEntry } from './erp-app-entry.js';

export type DatabaseJob =
  | { kind: 'pack'; source: string; destination: string }
  | { kind: 'pack-stream'; destination: string }
  | { kind: 'snapshot'; source: string; destination: string }
  | { kind: 'unpack'; archive: string; sha256: string; destination: string };

export type DatabaseJobReply =
  | { ok: true; value: unknown }
  | { ok: false; reason: string }
  | { ok: false; internal: string };

/** Runs `job`; `input` is what a pack-stream job reads (its source failing fails the job). */
export async function runDatabaseJob<T>(job: DatabaseJob, input?: Readable): Promise<T> {
  const worker = new Worker(compiledEntry('local', 'database-worker.js'), { workerData: job, stdin: input !== undefined });
  let inputFailure: unknown;
  if (input && worker.stdin) {
    pipeline(input, worker.stdin).catch((error: unknown) => {
      inputFailure = error;
      void worker.terminate();
    });
  }
  const reply = await new Promise<DatabaseJobReply>((resolve) => {
    worker.once('message', (message: DatabaseJobReply) => resolve(message));
    worker.once('error', (error) => resolve({ ok: false, internal: error.stack ?? String(error) }));
    worker.once('exit', (code) => resolve({ ok: false, internal: `the database worker exited with code ${code} before answering` }));
  });
  await worker.terminate();
  if (inputFailure !== undefined) throw inputFailure;
  // A job that failed before the end of its input lets the source go (an engine's connection).
  input?.destroy();
  if (reply.ok) return reply.value as T;
  if ('reason' in reply) throw new DriverError(reply.reason);
  throw new Error(`database job ${job.kind} failed: ${reply.internal}`);
}
