// A Tryton service (PostgreSQL and Tryton on a real Docker engine) of more than 100 MB, its
// backups sent off-site to a real S3-compatible store that checks signatures (Ceph's radosgw):
// its scheduled backup reaches the store encrypted (the object is no tar; `age -d` with the key
// the operator was shown opens it, and `tar --zstd -t` lists the archive), and once the server's
// copy is gone (its backups volume deleted, and this node's copy with it), restoring the backup
// fetches the off-site copy and brings the data back.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppImages } from '../../src/engine/apps/images/build-app-images.js';
import { backupsVolumeName } from '../../src/engine/docker/labels.js';
import { admin } from '../support/cli.js';
import type { TestServer } from '../support/fixtures.js';
import { waitForOperation } from '../engine/support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../engine/docker/support/docker-engine.js';
import { startDockerTeam } from '../engine/docker/support/docker-team.js';
import { nodeCopyOf } from '../engine/docker/support/node-backup-copies.js';
import { teamCalls } from '../engine/docker/support/team-calls.js';
import { createParty, partyNames, rpc, startedTryton, tryton, TRYTON_START_MS, trytonSession } from '../engine/docker/support/tryton-app.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';
import { downloadObject, openedWithAge } from './support/offsite-looks.js';

/** Six attachments of random bytes in Tryton's file store: 120 MB that no compression shrinks. */
const ATTACHMENTS = Array.from({ length: 6 }, () => randomBytes(20 * 1024 * 1024));

describe.runIf(dockerAvailable && objectStoreInstalled)('off-site backups of a Tryton service of 100 MB+', () => {
  const api = testDockerApi();
  const scratch = mkdtempSync(join(tmpdir(), 'tryton-offsite-'));
  let store: TestObjectStore;
  let server: TestServer;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let password: string;
  let backupKey: string;
  let backupId: string;
  const clock = { now: Date.now() };
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);
  const attachmentDigests = async (url: string, session: string) => {
    const found = await rpc(url, 'model.ir.attachment.search_read', [[], 0, null, [['name', 'ASC']], ['name', 'data'], {}], session);
    return (found.result as { name: string; data: { base64: string } }[]).map((each) => `${each.name}:${createHash('sha256').update(Buffer.from(each.data.base64, 'base64')).digest('hex')}`);
  };
  const expected = ATTACHMENTS.map((bytes, index) => `part-${index}.bin:${createHash('sha256').update(bytes).digest('hex')}`);

  beforeAll(async () => {
    const started = startObjectStore();
    await buildAppImages(api, tryton, () => undefined);
    const docker = await startDockerTeam({ engine: { clock: () => clock.now, backupScheduleIntervalMs: 0, offsite: { intervalMs: 0 } } });
    ({ server, token } = docker);
    store = await started;
    serverId = await docker.addServer('docker-offsite');
    const secretFile = join(scratch, 'secret');
    writeFileSync(secretFile, store.secretAccessKey);
    backupKey = (await admin(server.dataDir, ['set-backup-destination', '--team', docker.teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', secretFile, '--allow-private'])).backup_key;
    let url: string;
    ({ serviceId, password, url } = await startedTryton({ call, actAndWait }, (id) => waitForOperation(server.baseUrl, token, id, 120_000), serverId));
    const session = await trytonSession(url, 'admin', password);
    const partyId = await createParty(url, session, 'Acme Hosting');
    for (const [index, bytes] of ATTACHMENTS.entries()) {
      const attached = await rpc(url, 'model.ir.attachment.create', [[{
        name: `part-${index}.bin`, resource: `party.party,${partyId}`, data: { __class__: 'bytes', base64: bytes.toString('base64') },
      }], {}], session);
      expect(attached.status, JSON.stringify(attached.error)).toBe(200);
    }
  }, TRYTON_START_MS + 20 * 60_000);

  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    await store?.close();
    rmSync(scratch, { recursive: true, force: true });
  }, 180_000);

  it('sends its scheduled backup to the store encrypted: no tar there, but age with the team\'s key opens it and tar lists it', async () => {
    await server.app.engine.scheduler.tick();
    clock.now = Date.now() + 25 * 3_600_000;
    const { queued } = await server.app.engine.scheduler.tick();
    const ours = await server.app.db.kysely.selectFrom('backups').select(['id', 'operation_id'])
      .where('id', 'in', queued.length > 0 ? queued : ['none']).where('service_id', '=', serviceId).executeTakeFirstOrThrow();
    expect(await waitForOperation(server.baseUrl, token, ours.operation_id!, 15 * 60_000)).toMatchObject({ state: 'succeeded' });
    backupId = ours.id;
    const backup = (await call('GET', `/api/backups/${backupId}`)).body;
    expect(backup).toMatchObject({ kind: 'scheduled', state: 'completed' });
    expect(backup.size_bytes).toBeGreaterThan(100 * 1024 * 1024);
    await server.app.engine.offsite.tick();
    expect((await call('GET', `/api/backups/${backupId}`)).body.locations).toEqual([
      { kind: 'server', state: 'stored', reason: null }, { kind: 'offsite', state: 'stored', reason: null },
    ]);
    const copy = await server.app.db.kysely.selectFrom('backup_offsite_copies').selectAll().where('backup_id', '=', backupId).executeTakeFirstOrThrow();
    const object = join(scratch, 'object.age');
    await downloadObject(store, copy.object_key, object);
    expect(statSync(object).size).toBe(copy.size_bytes);
    // Not readable as an archive: tar refuses it; nothing of the attachments is in it in clear.
    expect(() => execFileSync('tar', ['--zstd', '-tf', object], { stdio: 'pipe' })).toThrow();
    expect(readFileSync(object).includes(ATTACHMENTS[0]!.subarray(0, 64))).toBe(false);
    const opened = await openedWithAge(backupKey, object, scratch);
    expect(opened.sha256).toBe(backup.sha256);
    const listed = execFileSync('tar', ['--zstd', '-tf', opened.file], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }).split('\n');
    expect(listed).toEqual(expect.arrayContaining(['teaminfra-app.json', 'database/tryton.dump']));
    rmSync(object);
    rmSync(opened.file);
  }, 20 * 60_000);

  it('restores the backup from off-site once the server\'s copy is gone, bringing the data back', async () => {
    expect(backupId).toBeDefined();
    const url = (await call('GET', `/api/service-erp/${serviceId}`)).body.url;
    await createParty(url, await trytonSession(url, 'admin', password), 'Made after the backup');
    // The server's backups volume is lost, and this node's copy with it.
    await api.json('DELETE', `/volumes/${backupsVolumeName(serverId)}`, { accept: [404] });
    rmSync(nodeCopyOf(server.dataDir, serviceId, backupId), { force: true });

    const done = await actAndWait('POST', `/api/backups/${backupId}/restore`, TRYTON_START_MS);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
    const session = await trytonSession(url, 'admin', password);
    expect(await partyNames(url, session)).toEqual(['Acme Hosting']);
    expect(await attachmentDigests(url, session)).toEqual(expected);
    const locations = (await call('GET', `/api/backups/${backupId}`)).body.locations;
    expect(locations[0]).toMatchObject({ kind: 'server', state: 'failed' });
    expect(locations[0].reason).toMatch(/^The server's copy of the backup could not be read/);
    expect(locations[1]).toEqual({ kind: 'offsite', state: 'stored', reason: null });
  }, TRYTON_START_MS + 10 * 60_000);
});
