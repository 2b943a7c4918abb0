// A server whose engine is stopped for good: the operator marks it lost, and recover_erp_service
// makes its Tryton service again on a server of another engine from its newest off-site backup
// (a real S3-compatible store that checks signatures, Ceph's radosgw): Tryton answers there with
// the data of that backup, its admin signs in with the same password, and the operation says the
// time of the data it came back with. Never while the server may still run it; a recovery that
// fails (its off-site copy changed in the store) leaves nothing of the service on the new server.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppImages } from '../../src/engine/apps/images/build-app-images.js';
import { admin } from '../support/cli.js';
import type { TestServer } from '../support/fixtures.js';
import { waitForOperation } from '../engine/support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../engine/docker/support/docker-engine.js';
import { startDockerTeam } from '../engine/docker/support/docker-team.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from '../engine/docker/support/second-engine.js';
import { engineObjectsOf, teamCalls } from '../engine/docker/support/team-calls.js';
import { createParty, partyNames, startedTryton, tryton, TRYTON_START_MS, trytonSession } from '../engine/docker/support/tryton-app.js';
import { copyImages } from './support/copied-images.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';
import { downloadObject } from './support/offsite-looks.js';

describe.runIf(dockerAvailable && secondEngineStartable && objectStoreInstalled)('recover_erp_service after its server was lost', () => {
  const api = testDockerApi();
  const scratch = mkdtempSync(join(tmpdir(), 'recover-'));
  let store: TestObjectStore;
  let second: SecondEngine | undefined;
  let server: TestServer;
  let token: string;
  let lostServer: string;
  let newServer: string;
  let serviceId: string;
  let password: string;
  let backup: { id: string; completed_at: string };
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);

  beforeAll(async () => {
    const started = startObjectStore();
    await buildAppImages(api, tryton, () => undefined);
    second = await startSecondEngine();
    await copyImages(api, second.api, tryton.containers.map((container) => container.image));
    const docker = await startDockerTeam({ engine: { offsite: { intervalMs: 0 } } });
    ({ server, token } = docker);
    store = await started;
    lostServer = (await admin(server.dataDir, ['create-server', '--team', docker.teamId, '--name', 'doomed', '--docker-host', second.host])).id;
    newServer = await docker.addServer('rescue');
    writeFileSync(join(scratch, 'secret'), store.secretAccessKey);
    await admin(server.dataDir, ['set-backup-destination', '--team', docker.teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', join(scratch, 'secret'), '--allow-private']);
    let url: string;
    ({ serviceId, password, url } = await startedTryton({ call, actAndWait }, (id) => waitForOperation(server.baseUrl, token, id, 120_000), lostServer));
    await createParty(url, await trytonSession(url, 'admin', password), 'Before the loss');
    const done = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, 15 * 60_000);
    expect(done).toMatchObject({ state: 'succeeded' });
    await server.app.engine.offsite.tick();
    backup = (await call('GET', `/api/backups/${done.backup_id}`)).body;
    expect(backup).toMatchObject({ locations: [{ kind: 'server', state: 'stored' }, { kind: 'offsite', state: 'stored' }] });
    // Written after the last backup: lost with the server, the data-loss window.
    await createParty(url, await trytonSession(url, 'admin', password), 'After the backup');
  }, TRYTON_START_MS + 30 * 60_000);

  afterAll(async () => {
    await server?.close();
    for (const id of [lostServer, newServer]) if (id) await removeEverythingOf(api, id);
    await second?.stop();
    await api.close();
    await store?.close();
    rmSync(scratch, { recursive: true, force: true });
  }, 180_000);

  it('refuses to recover a service whose server is not marked lost, since it may still run there', async () => {
    const refused = await call('POST', `/api/service-erp/${serviceId}/recover`, { server_id: newServer });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/is not marked lost, so the service may still run there/);
  });

  it('fails with a sentence and leaves nothing of the service on the new server when its off-site copy was changed in the store', async () => {
    await second!.stop();
    second = undefined;
    const marked = await admin(server.dataDir, ['mark-server-lost', '--server', lostServer]);
    expect(marked).toMatchObject({ server_id: lostServer, state: 'lost', failed_services: [serviceId] });
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body).toMatchObject({ state: 'failed' });
    const { object_key: key } = await server.app.db.kysely.selectFrom('backup_offsite_copies').select('object_key').where('backup_id', '=', backup.id).executeTakeFirstOrThrow();
    await downloadObject(store, key, join(scratch, 'object.age'));
    await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: key, Body: randomBytes(64 * 1024) }));

    try {
      const failed = await actAndWait('POST', `/api/service-erp/${serviceId}/recover`, 10 * 60_000, { server_id: newServer });
      expect(failed).toMatchObject({ state: 'failed', reason: expect.stringMatching(/off-site copy could not be fetched \(the off-site copy does not open with the team's backup key/) });
      expect((await call('GET', `/api/service-erp/${serviceId}`)).body).toMatchObject({ state: 'failed', server_id: lostServer });
      // Provisioned there before the fetch (its network and volumes): removed with the failure.
      expect(await engineObjectsOf(api, serviceId)).toEqual({ containers: [], volumes: [], networks: [] });
    } finally {
      // Put back for the recovery below.
      await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: key, Body: readFileSync(join(scratch, 'object.age')) }));
    }
  }, 15 * 60_000);

  it('makes the service again on another engine from its newest off-site backup once its engine is gone and its server marked lost', async () => {
    const done = await actAndWait('POST', `/api/service-erp/${serviceId}/recover`, TRYTON_START_MS, { server_id: newServer });
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
    expect(done).toMatchObject({ backup_id: backup.id, result: { data_as_of: backup.completed_at, recovered_on_server_id: newServer } });
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running', server_id: newServer });
    // The same admin password, the data of the last backup.
    const session = await trytonSession(service.url, 'admin', password);
    expect(await partyNames(service.url, session)).toEqual(['Before the loss']);
  }, TRYTON_START_MS + 10 * 60_000);
});
