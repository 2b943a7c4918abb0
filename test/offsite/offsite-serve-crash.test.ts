// `teaminfra serve` killed with SIGKILL in the middle of a backup's upload, with the real compiled
// command and a real S3-compatible store (Ceph's radosgw): the copy is not counted as stored, and
// the next start takes it at once (its holder is gone), ends the parts the killed upload left in
// the store, and stores it whole. Killed while a restore fetches the backup back from off-site,
// it leaves no partial copy of it on the node's disk once started again.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/connect.js';
import { admin, seedThroughCli, startServe, type ServeProcess } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { send, waitForOperation } from '../engine/support/engine-http.js';
import { completedBackup } from './support/completed-backup.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';
import { downloadObject, openedWithAge, unfinishedUploads } from './support/offsite-looks.js';

describe.runIf(objectStoreInstalled && process.platform === 'linux')('teaminfra serve killed in the middle of an upload', () => {
  const dataDir = tempDataDir();
  const scratch = mkdtempSync(join(tmpdir(), 'offsite-crash-'));
  let store: TestObjectStore;
  let serve: ServeProcess | undefined;
  let db: Db;
  let backupKey: string;
  let backupId: string;
  let sha256: string;
  let token: string;

  beforeAll(async () => {
    const started = startObjectStore();
    const { teamId, serviceId, token: full } = await seedThroughCli(dataDir, { team: 'Crash team', service: 'Crash ERP' });
    token = full;
    store = await started;
    writeFileSync(join(scratch, 'secret'), store.secretAccessKey);
    backupKey = (await admin(dataDir, ['set-backup-destination', '--team', teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', join(scratch, 'secret'), '--allow-private'])).backup_key;
    // A backup of 80 MB completed as the engine completes one: queued for off-site in the same transaction.
    db = openDatabase(dataDir);
    ({ id: backupId, sha256 } = await completedBackup(db.kysely, dataDir, { teamId, serviceId, bytes: 80 * 1024 * 1024 }));
  }, 600_000);
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  const copy = () => db.kysely.selectFrom('backup_offsite_copies').selectAll().where('backup_id', '=', backupId).executeTakeFirstOrThrow();

  it('leaves the copy pending when killed mid-upload, and the next start stores it whole, with no part left behind', async () => {
    const { object_key: key } = await copy();
    serve = await startServe(dataDir);
    const began = Date.now() + 60_000;
    while ((await unfinishedUploads(store, key)).length === 0) {
      if (Date.now() > began) throw new Error(`the upload never began:\n${serve.output()}`);
      await sleep(20);
    }
    expect(await serve.stop('SIGKILL')).toBeNull();
    serve = undefined;
    const killed = await copy();
    expect(killed).toMatchObject({ state: 'pending', stored_at: null, size_bytes: null });
    expect(killed.lease_owner).not.toBeNull();
    expect(await unfinishedUploads(store, key)).toEqual([key]);

    serve = await startServe(dataDir);
    const stored = Date.now() + 120_000;
    while ((await copy()).state !== 'stored') {
      if (Date.now() > stored) throw new Error(`the copy was not stored after the restart: ${JSON.stringify(await copy())}\n${serve.output()}`);
      await sleep(200);
    }
    expect(await unfinishedUploads(store, key)).toEqual([]);
    await downloadObject(store, key, join(scratch, 'object.age'));
    expect((await openedWithAge(backupKey, join(scratch, 'object.age'), scratch)).sha256).toBe(sha256);
  }, 300_000);

  it('leaves no partial copy behind when killed while fetching a backup from off-site for a restore, and the next start ends the restore', async () => {
    // The server's copy is gone: the restore fetches the off-site copy (80 MB, decrypted and checked as it comes).
    const { file_path: file } = await db.kysely.selectFrom('backups').select('file_path').where('id', '=', backupId).executeTakeFirstOrThrow();
    rmSync(file as string);
    serve ??= await startServe(dataDir);
    const accepted = await send(serve.baseUrl, 'POST', `/api/backups/${backupId}/restore`, token, {});
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const fetching = Date.now() + 60_000;
    while (partialFetches().length === 0) {
      if (Date.now() > fetching) throw new Error(`the fetch never began:\n${serve.output()}`);
      await sleep(10);
    }
    expect(await serve.stop('SIGKILL')).toBeNull();
    serve = undefined;
    expect(partialFetches()).not.toEqual([]);

    serve = await startServe(dataDir);
    const done = await waitForOperation(serve.baseUrl, token, accepted.body.id, 120_000);
    // The bytes are random, not a database: the restore fails with a sentence, having fetched them whole.
    expect(done).toMatchObject({ state: 'failed', reason: expect.not.stringMatching(/internal error/) });
    expect(partialFetches()).toEqual([]);
  }, 300_000);

  /** Files of an off-site fetch under way (or left by a killed one) anywhere in the data directory. */
  function partialFetches(): string[] {
    return readdirSync(dataDir, { recursive: true }).map(String).filter((name) => /\.offsite/.test(name));
  }
});
