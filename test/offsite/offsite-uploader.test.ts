// Every completed backup leaves the server (src/offsite/offsite-uploader.ts), against a real
// S3-compatible store that checks signatures (Ceph's radosgw): encrypted to the team's key (the
// store never holds a readable byte; `age -d` with the key shown once opens it to the backup's
// exact bytes), streamed as a multipart upload, stored only once the store confirmed it; kept
// pending and retried while the store is gone mid-upload; failed with a sentence when the store
// refuses it, the server's copy kept; removed from the store when retention removes the backup.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteBucketCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { nowIso } from '../../src/db/ids.js';
import { setNotificationMail } from '../../src/db/repositories/incidents.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { pruneBackups } from '../../src/engine/backup-retention.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/engine.js';
import { secretContext, setBackupDestination } from '../../src/offsite/destinations.js';
import { admin } from '../support/cli.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act } from '../engine/support/engine-http.js';
import { completedBackup } from './support/completed-backup.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';
import { downloadObject, objectExists, offsiteEvents, openedWithAge, sha256OfFile, unfinishedUploads } from './support/offsite-looks.js';

const RETRY_MS = 300;

describe.runIf(objectStoreInstalled)('the off-site uploader', () => {
  let store: TestObjectStore;
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let backupKey: string;
  const scratch = mkdtempSync(join(tmpdir(), 'offsite-uploader-'));
  const db = () => server.app.db.kysely;
  const tick = () => server.app.engine.offsite.tick();
  const copyOf = (backupId: string) => db().selectFrom('backup_offsite_copies').selectAll().where('backup_id', '=', backupId).executeTakeFirstOrThrow();
  const locations = async (backupId: string) => (await getJson(server.baseUrl, `/api/backups/${backupId}`, token)).body.locations;

  const completed = async (teamId: string, serviceId: string, bytes: number) => (await completedBackup(db(), server.dataDir, { teamId, serviceId, bytes })).id;

  beforeAll(async () => {
    [store, server] = await Promise.all([
      startObjectStore(),
      startTestServer({ engine: { offsite: { intervalMs: 0, retryDelayMs: RETRY_MS, leaseMs: 5_000, maxAttempts: 5 } } }, {}, { engine: true }),
    ]);
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    const secretFile = join(scratch, 'secret');
    writeFileSync(secretFile, `${store.secretAccessKey}\n`);
    // The operator's command, as a newcomer runs it: the store is on loopback, so --allow-private.
    const saved = await admin(server.dataDir, ['set-backup-destination', '--team', team.teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--prefix', 'offsite/', '--access-key-id', store.accessKeyId, '--secret-access-key-file', secretFile, '--allow-private']);
    expect(saved.decrypt).toContain('age -d -i key.txt OBJECT > backup.tar.zst');
    backupKey = saved.backup_key;
    expect(JSON.stringify(saved)).not.toContain(store.secretAccessKey);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await store?.close();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  it('stores a backup asked through the API encrypted, which age opens with the team\'s key to the backup\'s exact bytes', async () => {
    const done = await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.serviceIds[0]}/backups`);
    expect(done).toMatchObject({ state: 'succeeded' });
    const backupId = done.backup_id as string;
    expect(await locations(backupId)).toEqual([{ kind: 'server', state: 'stored', reason: null }, { kind: 'offsite', state: 'pending', reason: null }]);
    await tick();
    expect(await locations(backupId)).toEqual([{ kind: 'server', state: 'stored', reason: null }, { kind: 'offsite', state: 'stored', reason: null }]);
    const copy = await copyOf(backupId);
    // Named by ids only: nothing of the team's names reaches the store.
    expect(copy.object_key).toBe(`offsite/${team.serviceIds[0]}/${backupId}.tar.zst.age`);
    const object = join(scratch, 'api.age');
    await downloadObject(store, copy.object_key, object);
    expect(readFileSync(object).subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    const backup = (await getJson(server.baseUrl, `/api/backups/${backupId}`, token)).body;
    expect((await openedWithAge(backupKey, object, scratch)).sha256).toBe(backup.sha256);
    expect(await offsiteEvents(db(), backupId)).toEqual([{ type: 'backup.offsite_stored', state: 'stored', reason: null }]);
  });

  it('keeps a backup pending while the store is gone mid-upload, and stores it once, whole, when the store is back', async () => {
    const backupId = await completed(team.teamId, team.serviceIds[1], 70 * 1024 * 1024);
    const key = (await copyOf(backupId)).object_key;
    const ticking = tick();
    const deadline = Date.now() + 60_000;
    while ((await unfinishedUploads(store, key)).length === 0) {
      if (Date.now() > deadline) throw new Error('the upload never began');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Begun, not finished: not stored.
    expect((await locations(backupId))[1]).toEqual({ kind: 'offsite', state: 'pending', reason: null });
    await store.killGateway();
    await ticking;
    const pending = await copyOf(backupId);
    expect(pending).toMatchObject({ state: 'pending', attempts: 1 });
    expect(pending.reason).toMatch(new RegExp(`^Uploading the encrypted backup failed: the store at ${store.endpoint.replace(/\./g, '\\.')} could not be reached \\(E[A-Z]+\\)\\.$`));
    expect((await locations(backupId))[1]).toEqual({ kind: 'offsite', state: 'pending', reason: pending.reason });

    await store.startGateway();
    expect(await objectExists(store, key)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS + 50));
    await tick();
    const stored = await copyOf(backupId);
    expect(stored).toMatchObject({ state: 'stored', reason: null, attempts: 1 });
    const head = await store.client.send(new HeadObjectCommand({ Bucket: store.bucket, Key: key }));
    expect(head.ContentLength).toBe(stored.size_bytes);
    // A multipart object (its ETag counts its parts), and the killed attempt's parts are gone.
    expect(head.ETag).toMatch(/-\d+"$/);
    expect(await unfinishedUploads(store, key)).toEqual([]);
    const object = join(scratch, 'big.age');
    await downloadObject(store, key, object);
    const backup = await db().selectFrom('backups').select('sha256').where('id', '=', backupId).executeTakeFirstOrThrow();
    expect((await openedWithAge(backupKey, object, scratch)).sha256).toBe(backup.sha256);
    rmSync(object);
    // One event at the first failure, one once stored: no storm of retries.
    expect((await offsiteEvents(db(), backupId)).map((event) => `${event.type}:${event.state}`)).toEqual(['backup.offsite_failed:pending', 'backup.offsite_stored:stored']);
  }, 180_000);

  it('fails with a sentence when the bucket is gone or the key is refused, keeps the server\'s copy, and tries again once the destination is saved anew', async () => {
    const teamId = await insertTeam(db(), { name: 'Refused', plan: 'starter', timezone: 'UTC' });
    const serviceId = await insertService(db(), { teamId, serverId: await insertServer(db(), { teamId, name: 'host' }), name: 'ERP' });
    await upsertMember(db(), { teamId, email: 'refused-owner@example.com', role: 'owner', passwordHash: 'x' });
    await setNotificationMail(db(), { host: '127.0.0.1', port: 2525, from: 'alerts@teaminfra.test' }, nowIso());
    await store.makeBucket('short-lived');
    const destination = { endpoint: store.endpoint, region: store.region, bucket: 'short-lived', prefix: '', accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, allowPrivate: true };
    await setBackupDestination(db(), server.app.secrets, teamId, destination);
    await store.client.send(new DeleteBucketCommand({ Bucket: 'short-lived' }));
    const noBucket = await completed(teamId, serviceId, 1024 * 1024);
    await tick();
    const bucketSentence = `Uploading the encrypted backup failed: the bucket "short-lived" does not exist at ${store.endpoint}.`;
    expect(await copyOf(noBucket)).toMatchObject({ state: 'failed', reason: bucketSentence, attempts: 1 });
    expect(await offsiteEvents(db(), noBucket)).toEqual([{ type: 'backup.offsite_failed', state: 'failed', reason: bucketSentence }]);
    // The owners are told by email, as of a backup that failed: once (the one that follows within the hour writes none).
    const emailed = () => db().selectFrom('notification_emails').select(['recipient', 'what']).where('team_id', '=', teamId).execute();
    expect(await emailed()).toEqual([{
      recipient: 'refused-owner@example.com', what: `The off-site copy of a manual backup of ERP service "ERP" could not be stored: ${bucketSentence} The server's copy is kept.`,
    }]);

    // A key the store no longer accepts.
    const { id } = await db().selectFrom('backup_destinations').select('id').where('team_id', '=', teamId).where('replaced_at', 'is', null).executeTakeFirstOrThrow();
    await store.makeBucket('short-lived');
    await db().updateTable('backup_destinations').set({ secret_access_key: server.app.secrets.seal('revoked-secret', secretContext(id)) }).where('id', '=', id).execute();
    const refused = await completed(teamId, serviceId, 1024 * 1024);
    await tick();
    const refusedCopy = await copyOf(refused);
    expect(refusedCopy).toMatchObject({ state: 'failed' });
    expect(refusedCopy.reason).toBe('Uploading the encrypted backup failed: the store refused the access key id or the secret access key (SignatureDoesNotMatch).');
    expect(await emailed()).toHaveLength(1);
    // Nothing lost: both backups are still whole on their server.
    for (const backupId of [noBucket, refused]) {
      const backup = await db().selectFrom('backups').selectAll().where('id', '=', backupId).executeTakeFirstOrThrow();
      expect(backup.state).toBe('completed');
      expect(await sha256OfFile(backup.file_path!)).toBe(backup.sha256);
    }

    await setBackupDestination(db(), server.app.secrets, teamId, destination);
    await tick();
    expect((await copyOf(noBucket)).state).toBe('stored');
    expect((await copyOf(refused)).state).toBe('stored');
  }, 120_000);

  it('removes a backup\'s object from the store when retention removes the backup, and keeps the newer one', async () => {
    const older = await completed(team.teamId, team.serviceIds[0], 64 * 1024);
    const newer = await completed(team.teamId, team.serviceIds[0], 64 * 1024);
    await tick();
    const [olderKey, newerKey] = [(await copyOf(older)).object_key, (await copyOf(newer)).object_key];
    expect([await objectExists(store, olderKey), await objectExists(store, newerKey)]).toEqual([true, true]);
    const removed = await pruneBackups(server.app.db, { node: DEFAULT_ENGINE_CONFIG.node, defaults: { keepManual: 1, keepSafety: 3 } });
    expect(removed).toContain(older);
    expect(removed).not.toContain(newer);
    await tick();
    expect([await objectExists(store, olderKey), await objectExists(store, newerKey)]).toEqual([false, true]);
    expect(await db().selectFrom('backup_offsite_copies').select('backup_id').where('backup_id', '=', older).execute()).toEqual([]);
  }, 60_000);
});
