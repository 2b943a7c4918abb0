// Worker-thread entry for one database job (see database-job.ts): runs the job from workerData,
// posts one reply and ends. A full disk is the one system error worth a sentence for the team.
// A job that reads a stream (pack-stream) reads it on its stdin, which database-job.ts feeds.
import { parentPort, workerData } from 'node:worker_threads';
import { packDatabase, packStream, unpackVerified } from './backup-archive.js';
import { ArchiveProblem, snapshotDatabase } from './database-snapshot.js';
import type { DatabaseJob, DatabaseJobReply } from './database-job.js';

async function run(job: DatabaseJob): Promise<unknown> {
  switch (job.kind) {
    case 'pack': return packDatabase(job.source, job.destination);
    case 'pack-stream': return packStream(process.stdin, job.destination);
    case 'snapshot': return snapshotDatabase(job.source, job.destination);
    case 'unpack': return unpackVerified(job.archive, job.sha256, job.destination);
  }
}

function replyFor(error: unknown): DatabaseJobReply {
  if (error instanceof ArchiveProblem) return { ok: false, reason: error.message };
  if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return { ok: false, reason: 'The disk of the server is full, so the file could not be written.' };
  return { ok: false, internal: (error as Error)?.stack ?? String(error) };
}

run(workerData as DatabaseJob).then(
  (value) => parentPort?.postMessage({ ok: true, value: value ?? null } satisfies DatabaseJobReply),
  (error: unknown) => parentPort?.postMessage(replyFor(error)),
);
