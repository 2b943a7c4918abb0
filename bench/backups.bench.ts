// Backups benchmark: for one running ERP service with a 100 MB database, the time of a backup
// (API request to the operation's end: snapshot, zstd, SHA-256), of a restore (verify, safety
// backup, swap, restart) and the download throughput, against a plain file copy (fs.copyFile, as
// `cp` does) of the same database in the same run, and against what a careful engineer would
// hand-write for a compressed, checksummed backup (the whole database read in one transaction,
// zstd level 1 on all cores in one call, SHA-256, written and synced), and the same with gzip
// level 1 in one call, what backups used before zstd. Target: backup within 5x of the file copy.
// Size with BENCH_BACKUP_MB.
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, fsyncSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { availableParallelism } from 'node:os';
import { gzipSync } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { compress as zstdCompress } from 'zstd-napi';
import { insertServer } from '../src/db/repositories/servers.js';
import { insertService } from '../src/db/repositories/services.js';
import { snapshotDatabase } from '../src/engine/local/database-snapshot.js';
import { fillDatabase } from './support/erp-database.js';
import { envNumber } from './support/settings.js';
import { startEngineBenchServer } from './support/engine-server.js';

const ROUNDS = 3;
const TARGET_RATIO = 5;

export interface BackupsBenchFigures {
  databaseMb: number;
  backupMb: number;
  fileCopyMs: number;
  /** The SQLite online backup alone (no compression), in process: the floor of a consistent snapshot. */
  onlineBackupOnlyMs: number;
  /** Hand-written: serialize, zstd level 1 on all cores in one call, SHA-256, write and sync, in process. */
  handWrittenMs: number;
  /** The same with gzip level 1 in one call (what backups used before zstd). */
  handWrittenGzipMs: number;
  backupMs: number;
  /** The backup operation from the worker taking it to its end (without the request and queue). */
  backupRunMs: number;
  restoreMs: number;
  downloadMbPerS: number;
  ratios: {
    backupOverFileCopy: number; backupOverHandWritten: number; handWrittenOverFileCopy: number;
    onlineBackupOnlyOverFileCopy: number; restoreOverFileCopy: number; compression: number;
  };
  target: { backupWithinFileCopyTimes: number; met: boolean };
}

export default async function backupsBench(): Promise<BackupsBenchFigures> {
  const bench = await startEngineBenchServer('backups');
  const { app, baseUrl, dataDir, teamId, token } = bench;
  try {
    const db = app.db.kysely;
    const api = async (method: string, path: string) => {
      const response = await fetch(baseUrl + path, { method, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const timed = async (method: string, path: string): Promise<{ ms: number; operation: Record<string, unknown> }> => {
      const started = performance.now();
      const accepted = await api(method, path);
      if (accepted.status !== 202) throw new Error(`${method} ${path} answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
      for (;;) {
        const { body } = await api('GET', `/api/operations/${accepted.body.id}`);
        if (body.state === 'failed') throw new Error(`${method} ${path} failed: ${body.reason}`);
        if (body.state === 'succeeded') return { ms: performance.now() - started, operation: body };
        // Not faster: polling competes for the CPU the backup's compression uses.
        await sleep(20);
      }
    };

    const serverId = await insertServer(db, { teamId, name: 'bench', capacity: 2 });
    const serviceId = await insertService(db, { teamId, serverId, name: 'Large ERP' });
    const databaseFile = join(dataDir, 'servers', serverId, serviceId, 'erp.sqlite');
    fillDatabase(databaseFile, envNumber('BENCH_BACKUP_MB', 100));
    await timed('POST', `/api/service-erp/${serviceId}/start`);
    const databaseBytes = statSync(databaseFile).size;

    const copies: number[] = [];
    const snapshots: number[] = [];
    const handWritten: number[] = [];
    const handWrittenGzip: number[] = [];
    const backups: number[] = [];
    const runs: number[] = [];
    let backupId = '';
    for (let round = 0; round < ROUNDS; round++) {
      const copy = join(dataDir, `plain-copy-${round}.sqlite`);
      let started = performance.now();
      copyFileSync(databaseFile, copy);
      copies.push(performance.now() - started);
      rmSync(copy);
      started = performance.now();
      await snapshotDatabase(databaseFile, copy);
      snapshots.push(performance.now() - started);
      rmSync(copy);
      started = performance.now();
      handWrittenBackup(databaseFile, copy, zstdLevel1);
      handWritten.push(performance.now() - started);
      rmSync(copy);
      started = performance.now();
      handWrittenBackup(databaseFile, copy, gzipLevel1);
      handWrittenGzip.push(performance.now() - started);
      rmSync(copy);
      const backup = await timed('POST', `/api/service-erp/${serviceId}/backups`);
      backups.push(backup.ms);
      runs.push(Date.parse(backup.operation.finished_at as string) - Date.parse(backup.operation.started_at as string));
      backupId = backup.operation.backup_id as string;
    }
    const backupRow = (await api('GET', `/api/backups/${backupId}`)).body as { size_bytes: number };

    const downloadStarted = performance.now();
    const response = await fetch(`${baseUrl}/api/backups/${backupId}/download`, { headers: { Authorization: `Bearer ${token}` } });
    let downloaded = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) downloaded += chunk.length;
    const downloadMs = performance.now() - downloadStarted;
    if (downloaded !== backupRow.size_bytes) throw new Error(`downloaded ${downloaded} bytes of ${backupRow.size_bytes}`);

    const restore = await timed('POST', `/api/backups/${backupId}/restore`);

    const fileCopyMs = median(copies);
    const backupMs = median(backups);
    const onlineBackupOnlyMs = median(snapshots);
    const handWrittenMs = median(handWritten);
    const handWrittenGzipMs = median(handWrittenGzip);
    const figures: BackupsBenchFigures = {
      databaseMb: round(databaseBytes / 1e6), backupMb: round(backupRow.size_bytes / 1e6),
      fileCopyMs: round(fileCopyMs), onlineBackupOnlyMs: round(onlineBackupOnlyMs), handWrittenMs: round(handWrittenMs), handWrittenGzipMs: round(handWrittenGzipMs), backupMs: round(backupMs),
      backupRunMs: median(runs), restoreMs: round(restore.ms), downloadMbPerS: round(downloaded / 1e6 / (downloadMs / 1000)),
      ratios: {
        backupOverFileCopy: round(backupMs / fileCopyMs), backupOverHandWritten: round(backupMs / handWrittenMs),
        handWrittenOverFileCopy: round(handWrittenMs / fileCopyMs), onlineBackupOnlyOverFileCopy: round(onlineBackupOnlyMs / fileCopyMs),
        restoreOverFileCopy: round(restore.ms / fileCopyMs), compression: round(databaseBytes / backupRow.size_bytes),
      },
      target: { backupWithinFileCopyTimes: TARGET_RATIO, met: backupMs <= TARGET_RATIO * fileCopyMs },
    };
    printReport(figures, copies, backups, snapshots, handWritten, handWrittenGzip);
    return figures;
  } finally {
    await bench.close();
  }
}

const zstdLevel1 = (image: Buffer) => zstdCompress(image, { compressionLevel: 1, nbWorkers: availableParallelism() });
const gzipLevel1 = (image: Buffer) => gzipSync(image, { level: 1 });

/** The baseline: one consistent image of the database, compressed in one call, its SHA-256, written and synced. */
function handWrittenBackup(source: string, destination: string, compress: (image: Buffer) => Buffer): string {
  const db = new SQLite(source, { readonly: true });
  try {
    const compressed = compress(db.serialize());
    const descriptor = openSync(destination, 'w');
    try {
      writeSync(descriptor, compressed);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    return createHash('sha256').update(compressed).digest('hex');
  } finally {
    db.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function printReport(
  figures: BackupsBenchFigures, copies: number[], backups: number[], snapshots: number[], handWritten: number[], handWrittenGzip: number[],
): void {
  const list = (values: number[]) => values.map((value) => Math.round(value)).join(', ');
  console.log([
    `backups: one running ERP service, database ${figures.databaseMb} MB, backup file ${figures.backupMb} MB ` +
      `(compression ${figures.ratios.compression}x, zstd level 1)`,
    `  plain file copy (fs.copyFile)    median ${figures.fileCopyMs} ms   (${list(copies)})`,
    `  online backup alone (no zstd)    median ${figures.onlineBackupOnlyMs} ms   (${list(snapshots)})  = ${figures.ratios.onlineBackupOnlyOverFileCopy}x the file copy`,
    `  hand-written (image, zstd -1 on all cores in one call, SHA-256, sync)  median ${figures.handWrittenMs} ms   (${list(handWritten)})  = ` +
      `${figures.ratios.handWrittenOverFileCopy}x the file copy`,
    `  hand-written with gzip -1 instead (before zstd)                      median ${figures.handWrittenGzipMs} ms   (${list(handWrittenGzip)})`,
    `  backup, API request to its end   median ${figures.backupMs} ms   (${list(backups)})  = ${figures.ratios.backupOverFileCopy}x the file copy, ` +
      `${figures.ratios.backupOverHandWritten}x the hand-written one`,
    `    of which the operation ran     median ${figures.backupRunMs} ms (snapshot, zstd on its threads, SHA-256, in a worker thread)`,
    `  restore, API request to its end  ${figures.restoreMs} ms (verify, safety backup, swap, restart) = ${figures.ratios.restoreOverFileCopy}x`,
    `  download over REST               ${figures.downloadMbPerS} MB/s`,
    `  target: backup within ${figures.target.backupWithinFileCopyTimes}x the file copy: ${figures.target.met ? 'met' : 'NOT met'}`,
  ].join('\n'));
}

// Run directly: node dist/bench/backups.bench.js
if (import.meta.url === `file://${process.argv[1]}`) await backupsBench();
