// An upgrade keeps what the earlier version made on a Docker server working, with no action by
// the operator. The earlier version's real `teaminfra admin` and `serve` (compiled from git)
// make, on a data directory and the real engine: a service of the bundled ERP image on a server
// made with the defaults, one of the same image named by the operator (`--image`), and a Tryton
// service; each started, backed up between two marks in its data, copied (the copy started and
// stopped). Then that `serve` stops, and this checkout's starts on the same data directory: the
// services are as they were, and start, stop, restore of the old backups, copies old and new, and
// a new backup and restore all work through the REST API.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';
import { killProcessesMatching, send } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from './support/docker-engine.js';
import { earlierVersion } from './support/earlier-version.js';
import { erpImageKind, trytonKind, type MarkedService, type ServiceKind } from './support/service-marks.js';
import { TRYTON_START_MS, waitForLongOperation } from './support/tryton-app.js';

/**
 * The last commit of main with two Docker paths (docker-driver.ts running a service as one
 * container of the server's image, app-service-driver.ts running an app definition): what it made
 * must keep working on the one driver that replaces them.
 */
const LAST_TWO_DOCKER_PATHS = 'cd47da17aebc7e5f16dc0ef786d78e9fbb1391c8';
/** Both versions' `serve`: a start on this shared two-core machine may take longer than the default 10 s. */
const SERVE_ENV = { TEAMINFRA_START_TIMEOUT_MS: '60000' };
/** The longest an operation other than Tryton's first start may take here (a restore may migrate its database). */
const OPERATION_MS = 10 * 60_000;
const SERVE_STOP_MS = 90_000;

const BEFORE_OLD_BACKUP = 'before the old backup';
const AFTER_OLD_BACKUP = 'after the old backup';
const BEFORE_NEW_BACKUP = 'before the new backup';
const AFTER_NEW_BACKUP = 'after the new backup';

/** A service the earlier version made, and what the test kept of it. */
interface OldService extends MarkedService {
  kind: ServiceKind;
  oldBackupId: string;
  oldCopyId: string;
  /** The ids of its containers that ran when the earlier `serve` stopped. */
  runningAtUpgrade: string[];
}

describe.runIf(dockerAvailable)('an upgrade from the last version with two Docker paths', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  const serverIds: string[] = [];
  let serve: ServeProcess | undefined;
  let token: string;
  /** Left running at the upgrade: the ERP image on a default server, and Tryton. */
  let shop: OldService;
  let books: OldService;
  /** Left stopped at the upgrade: the ERP image named by the operator. */
  let depot: OldService;
  /**
   * Runs `check` on each service side by side, and waits for all before failing with the first
   * failure: no operation of one is left running into the next test when another fails.
   */
  const eachService = async (check: (service: OldService) => Promise<void>) => {
    const failed = (await Promise.allSettled([shop, depot, books].map(check))).find((each) => each.status === 'rejected');
    if (failed) throw failed.reason;
  };

  const baseUrl = () => (serve as ServeProcess).baseUrl;
  const serviceOf = async (id: string) => {
    const answer = await send(baseUrl(), 'GET', `/api/service-erp/${id}`, token);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };
  /** Sends an action and waits for its operation, which must succeed; the operation. */
  const succeed = async (method: string, path: string, body?: object, timeoutMs = OPERATION_MS) => {
    const accepted = await send(baseUrl(), method, path, token, body);
    expect(accepted.status, `${method} ${path}: ${JSON.stringify(accepted.body)}`).toBe(202);
    const done = await waitForLongOperation(baseUrl(), token, accepted.body.id, timeoutMs);
    expect(done.state, `${method} ${path}: ${JSON.stringify(done)}`).toBe('succeeded');
    return done;
  };
  const restart = (id: string) => async (run: () => Promise<void>) => {
    await succeed('POST', `/api/service-erp/${id}/stop`);
    await run();
    await succeed('POST', `/api/service-erp/${id}/start`);
  };
  const mark = (service: MarkedService & { kind: ServiceKind }, text: string) => service.kind.mark(service, text, restart(service.id));
  /** A service other than `of` (a copy) on the same server, for its kind's marks. */
  const sibling = async (of: OldService, id: string): Promise<MarkedService> =>
    ({ id, serverId: of.serverId, url: (await serviceOf(id)).url, password: of.password });
  const runningContainers = async (serviceId: string) => {
    const filters = JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`], status: ['running'] });
    return (await api.json<{ Id: string }[]>('GET', '/containers/json', { query: { filters } })).map((each) => each.Id).sort();
  };
  const stopServe = async (signal: NodeJS.Signals) => {
    const stopping = (serve as ServeProcess).stop(signal);
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`serve did not stop within ${SERVE_STOP_MS} ms`)), SERVE_STOP_MS).unref());
    return Promise.race([stopping, deadline]);
  };

  /** What an operator did with the earlier version: made, started, marked, backed up, marked again, copied. */
  async function makeBeforeUpgrade(kind: ServiceKind, serverId: string, name: string, firstStartMs: number): Promise<OldService> {
    const created = await succeed('POST', '/api/service-erp', { server_id: serverId, name, ...(kind.app ? { app: kind.app } : {}) });
    const id = created.service_id as string;
    await succeed('POST', `/api/service-erp/${id}/start`, undefined, firstStartMs);
    const service = { id, serverId, kind, url: (await serviceOf(id)).url, password: created.result?.initial_credentials?.password };
    await mark(service, BEFORE_OLD_BACKUP);
    const oldBackupId = (await succeed('POST', `/api/service-erp/${id}/backups`)).backup_id as string;
    await mark(service, AFTER_OLD_BACKUP);
    const oldCopyId = (await succeed('POST', `/api/service-erp/${id}/copies`, { name: `${name} staging` })).service_id as string;
    await succeed('POST', `/api/service-erp/${oldCopyId}/start`, undefined, firstStartMs);
    await succeed('POST', `/api/service-erp/${oldCopyId}/stop`);
    return { ...service, oldBackupId, oldCopyId, runningAtUpgrade: [] };
  }

  beforeAll(async () => {
    const old = earlierVersion(LAST_TWO_DOCKER_PATHS);
    const teamId = (await old.admin(dataDir, ['create-team', '--name', 'Upgrade team'])).id as string;
    const image = (await old.admin(dataDir, ['build-erp-image', '--docker-host', TEST_DOCKER_HOST])).image as string;
    await old.admin(dataDir, ['build-app-images', '--app', 'tryton', '--docker-host', TEST_DOCKER_HOST]);
    const server = async (name: string, options: string[]) => {
      const id = (await old.admin(dataDir, ['create-server', '--team', teamId, '--name', name, '--docker-host', TEST_DOCKER_HOST, ...options])).id as string;
      serverIds.push(id);
      return id;
    };
    // A newcomer's server runs the bundled image without naming it; an operator names an image.
    const defaultServer = await server('docker', []);
    const operatorServer = await server('docker-operator-image', ['--image', image]);
    token = (await old.admin(dataDir, ['create-token', '--team', teamId, '--name', 'ops', '--full-access'])).token as string;

    serve = await old.serve(dataDir, SERVE_ENV);
    const erp = erpImageKind(api, image);
    [shop, depot, books] = await Promise.all([
      makeBeforeUpgrade(erp, defaultServer, 'Shop', OPERATION_MS),
      makeBeforeUpgrade(erp, operatorServer, 'Depot', OPERATION_MS),
      makeBeforeUpgrade(trytonKind(), defaultServer, 'Books', TRYTON_START_MS),
    ]);
    await succeed('POST', `/api/service-erp/${depot.id}/stop`);
    for (const service of [shop, books]) service.runningAtUpgrade = await runningContainers(service.id);

    expect(await stopServe('SIGTERM')).toBe(0);
    serve = await startServe(dataDir, [], SERVE_ENV);
  }, 5 * 60_000 + TRYTON_START_MS + 8 * OPERATION_MS);

  afterAll(async () => {
    if (serve) await stopServe('SIGKILL');
    await killProcessesMatching(dataDir);
    // Only what this suite made: everything labelled with its servers' ids.
    for (const serverId of serverIds) await removeEverythingOf(api, serverId);
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 5 * 60_000);

  it('keeps the services that ran before the upgrade running in the same containers, answering at the same urls with their data', async () => {
    for (const service of [shop, books]) {
      expect(await serviceOf(service.id)).toMatchObject({ state: 'running', url: service.url });
      await service.kind.expectAnswers(service);
      expect(service.runningAtUpgrade.length).toBeGreaterThan(0);
      expect(await runningContainers(service.id)).toEqual(service.runningAtUpgrade);
      expect(await service.kind.marksOf(service)).toEqual([AFTER_OLD_BACKUP, BEFORE_OLD_BACKUP]);
    }
  }, 2 * 60_000);

  it('starts the service that was stopped before the upgrade, at its url, with its data', async () => {
    expect(await serviceOf(depot.id)).toMatchObject({ state: 'stopped' });
    await succeed('POST', `/api/service-erp/${depot.id}/start`);
    expect(await serviceOf(depot.id)).toMatchObject({ state: 'running', url: depot.url });
    await depot.kind.expectAnswers(depot);
    expect(await depot.kind.marksOf(depot)).toEqual([AFTER_OLD_BACKUP, BEFORE_OLD_BACKUP]);
  }, OPERATION_MS);

  it('stops and starts each service, which answers at the same url after', async () => {
    await eachService(async (service) => {
      await succeed('POST', `/api/service-erp/${service.id}/stop`);
      expect(await serviceOf(service.id)).toMatchObject({ state: 'stopped' });
      await succeed('POST', `/api/service-erp/${service.id}/start`);
      expect(await serviceOf(service.id)).toMatchObject({ state: 'running', url: service.url });
      await service.kind.expectAnswers(service);
    });
  }, 2 * OPERATION_MS);

  it('restores each service\'s backup taken before the upgrade: its data is as it was then, at the same url', async () => {
    await eachService(async (service) => {
      await succeed('POST', `/api/backups/${service.oldBackupId}/restore`);
      expect(await serviceOf(service.id)).toMatchObject({ state: 'running', url: service.url });
      await service.kind.expectAnswers(service);
      expect(await service.kind.marksOf(service)).toEqual([BEFORE_OLD_BACKUP]);
    });
  }, OPERATION_MS);

  it('starts each copy made before the upgrade, with the data it was copied with', async () => {
    await eachService(async (service) => {
      await succeed('POST', `/api/service-erp/${service.oldCopyId}/start`);
      const copy = await sibling(service, service.oldCopyId);
      expect(await serviceOf(copy.id)).toMatchObject({ state: 'running', parent_id: service.id });
      await service.kind.expectAnswers(copy);
      expect(await service.kind.marksOf(copy)).toEqual([AFTER_OLD_BACKUP, BEFORE_OLD_BACKUP]);
      await succeed('POST', `/api/service-erp/${copy.id}/stop`);
    });
  }, 2 * OPERATION_MS);

  it('copies each service after the upgrade, and the copy starts with the service\'s data', async () => {
    await eachService(async (service) => {
      const copyId = (await succeed('POST', `/api/service-erp/${service.id}/copies`, { name: 'After the upgrade' })).service_id as string;
      await succeed('POST', `/api/service-erp/${copyId}/start`);
      const copy = await sibling(service, copyId);
      await service.kind.expectAnswers(copy);
      expect(await service.kind.marksOf(copy)).toEqual([BEFORE_OLD_BACKUP]);
      await succeed('POST', `/api/service-erp/${copyId}/stop`);
    });
  }, 3 * OPERATION_MS);

  it('backs each service up and restores that backup after the upgrade', async () => {
    await eachService(async (service) => {
      await mark(service, BEFORE_NEW_BACKUP);
      const backupId = (await succeed('POST', `/api/service-erp/${service.id}/backups`)).backup_id as string;
      await mark(service, AFTER_NEW_BACKUP);
      await succeed('POST', `/api/backups/${backupId}/restore`);
      expect(await serviceOf(service.id)).toMatchObject({ state: 'running', url: service.url });
      await service.kind.expectAnswers(service);
      expect(await service.kind.marksOf(service)).toEqual([BEFORE_NEW_BACKUP, BEFORE_OLD_BACKUP]);
    });
  }, 6 * OPERATION_MS);
});
