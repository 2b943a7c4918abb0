// Runs one of the local driver's long database jobs (backup-archive.ts) in a worker thread, so
// the control plane's event loop keeps answering while SQLite copies or checks a large file.
// A job's problem with the data becomes a DriverError with its sentence; anything else is ours.
import { Worker } from 'node:worker_threads';
import { DriverError } from '../driver.js';
import { compiledEntry } from './erp-app-entry.js';

export type DatabaseJob =
  | { kind: 'pack'; source: string; destination: string }
  | { kind: 'snapshot'; source: string; destination: string }
  | { kind: 'unpack'; archive: string; sha256: string; destination: string };

export type DatabaseJobReply =
  | { ok: true; value: unknown }
  | { ok: false; reason: string }
  | { ok: false; internal: string };

export async function runDatabaseJob<T>(job: DatabaseJob): Promise<T> {
  const worker = new Worker(compiledEntry('local', 'database-worker.js'), { workerData: job });
  const reply = await new Promise<DatabaseJobReply>((resolve) => {
    worker.once('message', (message: DatabaseJobReply) => resolve(message));
    worker.once('error', (error) => resolve({ ok: false, internal: error.stack ?? String(error) }));
    worker.once('exit', (code) => resolve({ ok: false, internal: `the database worker exited with code ${code} before answering` }));
  });
  await worker.terminate();
  if (reply.ok) return reply.value as T;
  if ('reason' in reply) throw new DriverError(reply.reason);
  throw new Error(`database job ${job.kind} failed: ${reply.internal}`);
}
