// `teaminfra serve` killed with SIGKILL in the middle of recover_erp_service, with the real
// compiled command, two Docker engines (the lost server's, a second dockerd stopped for good, and
// the test engine it is recovered onto) and a real S3-compatible store (Ceph's radosgw), killed
// while the backup is being loaded into the volumes it staged on the new engine. Killed three
// times, the fourth start gives it up: it fails with a sentence, the service stays on its lost
// server, and nothing of it is left on the new engine. Asked again and killed once, the next start
// takes it at once (its holder is gone), stages it again over what the killed attempt left, and
// ends it: the service runs on the new server alone, with the data of its backup and its admin's
// password, and nothing of the killed attempt is left on the engine.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/connect.js';
import { buildAppImages } from '../../src/engine/apps/images/build-app-images.js';
import { generationOf, LABEL, labelFilter } from '../../src/engine/docker/labels.js';
import { admin, startServe, type ServeProcess } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from '../engine/docker/support/docker-engine.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from '../engine/docker/support/second-engine.js';
import { teamCalls } from '../engine/docker/support/team-calls.js';
import { createParty, partyNames, startedTryton, tryton, TRYTON_START_MS, trytonSession, waitForLongOperation } from '../engine/docker/support/tryton-app.js';
import { copyImages } from './support/copied-images.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';

describe.runIf(dockerAvailable && secondEngineStartable && objectStoreInstalled)('teaminfra serve killed in the middle of recover_erp_service', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  const scratch = mkdtempSync(join(tmpdir(), 'recover-crash-'));
  let store: TestObjectStore;
  let second: SecondEngine | undefined;
  let serve: ServeProcess | undefined;
  let db: Db;
  let token: string;
  let lostServer: string;
  let newServer: string;
  let serviceId: string;
  let password: string;
  let backupId: string;
  const { call } = teamCalls(() => serve!.baseUrl, () => token);
  // Polled twice a second: `serve` limits a token's rate.
  const actAndWait = async (method: string, path: string, timeoutMs: number, body?: object) => {
    const accepted = await call(method, path, body);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    return waitForLongOperation(serve!.baseUrl, token, accepted.body.id, timeoutMs);
  };

  const until = async (what: string, check: () => Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms:\n${serve?.output() ?? ''}`);
      await sleep(100);
    }
  };
  const onNewEngine = async () => {
    const filters = labelFilter({ [LABEL.serviceId]: serviceId });
    const containers = await api.json<{ Names: string[]; State: string; Labels: Record<string, string> }[]>('GET', '/containers/json', { query: { all: 1, filters } });
    const volumes = (await api.json<{ Volumes: { Name: string; Labels: Record<string, string> }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
    return { containers, volumes };
  };

  beforeAll(async () => {
    const started = startObjectStore();
    await buildAppImages(api, tryton, () => undefined);
    second = await startSecondEngine();
    await copyImages(api, second.api, tryton.containers.map((container) => container.image));
    const teamId = (await admin(dataDir, ['create-team', '--name', 'Recover crash team'])).id as string;
    lostServer = (await admin(dataDir, ['create-server', '--team', teamId, '--name', 'doomed', '--docker-host', second.host])).id as string;
    newServer = (await admin(dataDir, ['create-server', '--team', teamId, '--name', 'rescue', '--docker-host', TEST_DOCKER_HOST])).id as string;
    token = (await admin(dataDir, ['create-token', '--team', teamId, '--name', 'ops', '--full-access'])).token as string;
    store = await started;
    writeFileSync(join(scratch, 'secret'), store.secretAccessKey);
    await admin(dataDir, ['set-backup-destination', '--team', teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', join(scratch, 'secret'), '--allow-private']);
    db = openDatabase(dataDir);
    serve = await startServe(dataDir);
    let url: string;
    ({ serviceId, password, url } = await startedTryton({ call, actAndWait }, (id) => waitForLongOperation(serve!.baseUrl, token, id, 120_000), lostServer));
    await createParty(url, await trytonSession(url, 'admin', password), 'Before the loss');
    const done = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, 15 * 60_000);
    expect(done).toMatchObject({ state: 'succeeded' });
    backupId = done.backup_id;
    await until('the off-site copy to be stored', async () =>
      (await db.kysely.selectFrom('backup_offsite_copies').select('state').where('backup_id', '=', backupId).executeTakeFirst())?.state === 'stored', 180_000);
  }, TRYTON_START_MS + 30 * 60_000);

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    if (newServer) await removeEverythingOf(api, newServer);
    await second?.stop();
    await api.close();
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }, 180_000);

  /** Killed in the middle: the backup being loaded, by this process's helper container, into the volumes it staged on the new engine. */
  const killWhileStaging = async (operationId: string) => {
    const pid = serve!.child.pid;
    await until('the recovery to stage the backup on the new engine', async () => {
      const { containers, volumes } = await onNewEngine();
      return volumes.some((volume) => volume.Labels[LABEL.stagedBy] === operationId)
        && containers.some((each) => each.Labels[LABEL.role] === 'helper' && each.Labels[LABEL.madeBy]?.includes(`/${pid}/`));
    }, 10 * 60_000);
    expect(await serve!.stop('SIGKILL')).toBeNull();
    serve = undefined;
    const killed = await db.kysely.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirstOrThrow();
    expect(killed).toMatchObject({ state: 'running', kind: 'recover' });
    expect(killed.lease_owner).not.toBeNull();
    expect((await db.kysely.selectFrom('erp_services').select('server_id').where('id', '=', serviceId).executeTakeFirstOrThrow()).server_id).toBe(lostServer);
  };

  it('gives the recovery up after three kills, leaving the service on its lost server, to be asked again, and nothing of it on the new engine', async () => {
    await second!.stop();
    second = undefined;
    expect(await admin(dataDir, ['mark-server-lost', '--server', lostServer])).toMatchObject({ state: 'lost', failed_services: [serviceId] });
    const accepted = await call('POST', `/api/service-erp/${serviceId}/recover`, { server_id: newServer });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const operationId = accepted.body.id as string;
    for (let kill = 1; kill <= 3; kill += 1) {
      await killWhileStaging(operationId);
      serve = await startServe(dataDir);
    }
    const done = await waitForLongOperation(serve!.baseUrl, token, operationId, 5 * 60_000);
    expect(done).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^The operation was interrupted 3 times .*Run it again\.$/) });
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body).toMatchObject({ state: 'failed', server_id: lostServer });
    const { containers, volumes } = await onNewEngine();
    const networks = await api.json<{ Name: string }[]>('GET', '/networks', { query: { filters: labelFilter({ [LABEL.serviceId]: serviceId }) } });
    expect({ containers: containers.map((each) => each.Names[0]), volumes: volumes.map((each) => each.Name), networks: networks.map((each) => each.Name) })
      .toEqual({ containers: [], volumes: [], networks: [] });
  }, 20 * 60_000);

  it('ends the recovery at the next start when killed while staging on the new engine: one server, the data, the same admin password, nothing half-made', async () => {
    const accepted = await call('POST', `/api/service-erp/${serviceId}/recover`, { server_id: newServer });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const operationId = accepted.body.id as string;
    await killWhileStaging(operationId);

    serve = await startServe(dataDir);
    const done = await waitForLongOperation(serve.baseUrl, token, operationId, TRYTON_START_MS);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded', backup_id: backupId, result: { recovered_on_server_id: newServer } });
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running', server_id: newServer });
    const session = await trytonSession(service.url, 'admin', password);
    expect(await partyNames(service.url, session)).toEqual(['Before the loss']);

    // Nothing of the killed attempt: no helper, one generation of volumes (the restored one, no staging label of a pending swap left behind), only running service containers.
    const { containers, volumes } = await onNewEngine();
    expect(containers.filter((each) => each.Labels[LABEL.role] !== 'service' && each.Labels[LABEL.role] !== 'front').map((each) => each.Names[0])).toEqual([]);
    expect(containers.every((each) => each.State === 'running'), JSON.stringify(containers.map((each) => [each.Names[0], each.State]))).toBe(true);
    const generations = new Set(volumes.map((volume) => generationOf(volume.Name)));
    expect(generations.size, JSON.stringify(volumes.map((volume) => volume.Name))).toBe(1);
    // No partial off-site fetch of the killed process left in the node's backup cache.
    const leftovers = readdirSync(join(dataDir, 'backups'), { recursive: true }).map(String).filter((name) => name.includes('.offsite-'));
    expect(leftovers).toEqual([]);
  }, TRYTON_START_MS + 10 * 60_000);
});
