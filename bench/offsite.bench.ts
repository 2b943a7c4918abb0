// Off-site upload benchmark: a backup of BENCH_OFFSITE_MB (200 MB by default; random bytes, as
// incompressible as a zstd archive) sent off-site by uploadOffsiteCopy (read, SHA-256 checked,
// age-encrypted as it is read, S3 multipart upload, size confirmed) against the same file put by
// hand with the same S3 client's multipart upload (@aws-sdk/lib-storage, the same part size and
// parts in flight, no encryption, no checksum) to the same store in the same run: Ceph's radosgw,
// started as the off-site suites start it (test/offsite/support/object-store-server.ts). Target:
// ours >= 0.8 of the hand upload's throughput. The encryption's share: the same file encrypted
// alone (read, age, discarded), as a part of our upload's time. Rounds alternate; the best of each.
// Then, on the same store, recover_erp_service of a Tryton service of 20,000 parties against
// pg_restore of the same dump by hand (support/recover-timing.ts); BENCH_OFFSITE_RECOVER=0 leaves
// it out (it takes minutes: the service is made and filled first).
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Upload } from '@aws-sdk/lib-storage';
import { createApp, defaultConfig } from '../src/app.js';
import { insertServer } from '../src/db/repositories/servers.js';
import { insertService } from '../src/db/repositories/services.js';
import { insertTeam } from '../src/db/repositories/teams.js';
import { encrypting } from '../src/offsite/backup-key.js';
import { setBackupDestination } from '../src/offsite/destinations.js';
import { PART_BYTES } from '../src/offsite/object-store.js';
import { uploadOffsiteCopy } from '../src/offsite/upload-backup.js';
import { completedBackup } from '../test/offsite/support/completed-backup.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from '../test/offsite/support/object-store-server.js';
import { recoverAgainstPgRestore, type RecoverFigures } from './support/recover-timing.js';
import { envNumber } from './support/settings.js';

const ROUNDS = 3;
const TARGET_RATIO = 0.8;

export interface OffsiteBenchFigures {
  backupMb: number;
  handUploadMs: number;
  oursMs: number;
  encryptOnlyMs: number;
  handMbPerS: number;
  oursMbPerS: number;
  ratio: number;
  encryptionShare: number;
  target: number;
  met: boolean;
  /** recover_erp_service over pg_restore by hand, also in `recover` (the run's summary line shows top-level numbers). */
  recoverOverByHand?: number;
  recover?: RecoverFigures | { skipped: string };
}

export default async function offsiteBench(): Promise<OffsiteBenchFigures | { skipped: string }> {
  if (!objectStoreInstalled) {
    console.log('skipped: radosgw, ceph-mon and ceph-osd are not installed (apt-get install radosgw ceph-mon ceph-osd)');
    return { skipped: 'no radosgw' };
  }
  const store = await startObjectStore();
  try {
    const figures = await uploadAgainstHand(store);
    if (process.env.BENCH_OFFSITE_RECOVER === '0') return figures;
    const recover = await recoverAgainstPgRestore(store);
    return { ...figures, recover, ...('recoverOverByHand' in recover ? { recoverOverByHand: recover.recoverOverByHand } : {}) };
  } finally {
    await store.close();
  }
}

async function uploadAgainstHand(store: TestObjectStore): Promise<OffsiteBenchFigures> {
  const megabytes = envNumber('BENCH_OFFSITE_MB', 200);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-offsite-'));
  const app = createApp({ ...defaultConfig(dataDir), engine: { reconcileIntervalMs: 0 } });
  try {
    await app.db.ready();
    const db = app.db.kysely;
    const teamId = await insertTeam(db, { name: 'Bench team', plan: 'starter', timezone: 'UTC' });
    const serviceId = await insertService(db, { teamId, serverId: await insertServer(db, { teamId, name: 'bench' }), name: 'Bench ERP' });
    await setBackupDestination(db, app.secrets, teamId, {
      endpoint: store.endpoint, region: store.region, bucket: store.bucket, prefix: 'bench/', accessKeyId: store.accessKeyId,
      secretAccessKey: store.secretAccessKey, allowPrivate: true,
    });
    const backup = await completedBackup(db, dataDir, { teamId, serviceId, bytes: megabytes * 1024 * 1024 });
    const row = await db.selectFrom('backups').select(['file_path', 'sha256']).where('id', '=', backup.id).executeTakeFirstOrThrow();
    const copy = await db.selectFrom('backup_offsite_copies').selectAll().where('backup_id', '=', backup.id).executeTakeFirstOrThrow();
    const key = await db.selectFrom('team_backup_keys').select('recipient').where('team_id', '=', teamId).executeTakeFirstOrThrow();
    const file = row.file_path as string;
    const hold = { hold: async () => ({ path: file, release: () => undefined }) };

    const timed = async (work: () => Promise<unknown>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const hand = () => timed(() => new Upload({
      client: store.client, queueSize: 2, partSize: PART_BYTES,
      params: { Bucket: store.bucket, Key: 'bench/by-hand.tar.zst', Body: createReadStream(file) },
    }).done());
    const ours = () => timed(() => uploadOffsiteCopy(db, app.secrets, hold, copy, { file_path: file, sha256: row.sha256 as string }, new AbortController().signal));
    const encryptOnly = () => timed(async () => pipeline(await encrypting(createReadStream(file), key.recipient), new Writable({
      write(_chunk, _encoding, callback) {
        callback();
      },
    })));

    const times = { hand: [] as number[], ours: [] as number[], encrypt: [] as number[] };
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating, so that neither side always runs on a warmer store.
      if (round % 2 === 0) {
        times.hand.push(await hand());
        times.ours.push(await ours());
      } else {
        times.ours.push(await ours());
        times.hand.push(await hand());
      }
      times.encrypt.push(await encryptOnly());
    }
    const handUploadMs = Math.min(...times.hand);
    const oursMs = Math.min(...times.ours);
    const encryptOnlyMs = Math.min(...times.encrypt);
    const figures: OffsiteBenchFigures = {
      backupMb: megabytes, handUploadMs, oursMs, encryptOnlyMs,
      handMbPerS: megabytes / (handUploadMs / 1000), oursMbPerS: megabytes / (oursMs / 1000),
      ratio: handUploadMs / oursMs, encryptionShare: encryptOnlyMs / oursMs, target: TARGET_RATIO, met: handUploadMs / oursMs >= TARGET_RATIO,
    };
    console.log(`upload of a ${megabytes} MB backup to radosgw (best of ${ROUNDS}):`);
    console.log(`  by hand (lib-storage multipart, no encryption): ${handUploadMs.toFixed(0)} ms, ${figures.handMbPerS.toFixed(1)} MB/s`);
    console.log(`  uploadOffsiteCopy (checked, age-encrypted, confirmed): ${oursMs.toFixed(0)} ms, ${figures.oursMbPerS.toFixed(1)} MB/s`);
    console.log(`  throughput ratio ${figures.ratio.toFixed(2)} (target >= ${TARGET_RATIO}: ${figures.met ? 'met' : 'NOT met'})`);
    console.log(`  encryption alone: ${encryptOnlyMs.toFixed(0)} ms, ${(figures.encryptionShare * 100).toFixed(0)}% of our upload's time`);
    return figures;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
