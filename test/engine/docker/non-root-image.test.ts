// An ERP image that runs as an unprivileged user, as Tryton's, Odoo's and most official images
// do: the bundled image with USER 1000:1000 and its data folder owned by that user. Backups (the
// snapshot folder), restores (staged data the user can write), copies and the removal of old
// backup files all work for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneBackups } from '../../../src/engine/backup-retention.js';
import { directoryTar } from '../../../src/engine/docker/archives.js';
import { getJson, type TestServer } from '../../support/fixtures.js';
import { act, fetchText } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { derivedImage, startDockerTeam } from './support/docker-team.js';
import { editServiceDatabase, productsDigest, type VolumeOf } from './support/service-volume.js';

describe.runIf(dockerAvailable)('ERP services of an image that does not run as root', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let image: string;
  let where: VolumeOf;

  /** Succeeded, or the reason why not shows in the failure. */
  const succeeded = (operation: { state: string; reason: string | null }) => expect([operation.state, operation.reason]).toEqual(['succeeded', null]);
  const running = async (id: string) => {
    const service = (await getJson(server.baseUrl, `/api/service-erp/${id}`, token)).body;
    expect(service.state).toBe('running');
    expect((await fetchText(service.url)).status).toBe(200);
  };

  beforeAll(async () => {
    const team = await startDockerTeam();
    ({ server, token } = team);
    // The bundled image, made to run as user 1000 with /data its own.
    image = await derivedImage(api, team.image, `teaminfra-test-nonroot:${Date.now().toString(36)}`, ['USER 1000:1000'],
      directoryTar('data', 0o755, { uid: 1000, gid: 1000 }));
    const inspected = await api.json<{ Config: { User: string } }>('GET', `/images/${encodeURIComponent(image)}/json`);
    expect(inspected.Config.User).toBe('1000:1000');
    serverId = await team.addServer('nonroot', image);
    where = { api, db: server.app.db.kysely, image, serverId };
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    if (image) await api.json('DELETE', `/images/${encodeURIComponent(image)}`, { query: { force: 1 }, accept: [404, 409] });
    await api.close();
  });

  it('creates and starts a service whose process runs as user 1000', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Unprivileged' });
    succeeded(created);
    serviceId = created.service_id;
    succeeded(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`));
    await running(serviceId);
    const [container] = await api.json<{ Id: string }[]>('GET', '/containers/json', {
      query: { filters: JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`, 'io.teaminfra.role=service'] }) },
    });
    const top = await api.json<{ Titles: string[]; Processes: string[][] }>('GET', `/containers/${container?.Id}/top`, { query: { ps_args: '-o pid,uid' } });
    expect(top.Titles).toEqual(['PID', 'UID']);
    expect(top.Processes.map((process) => process[1])).toEqual(['1000']);
  }, 180_000);

  it('backs up and restores it: the restored data is back and the service, as user 1000, runs on it', async () => {
    const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    succeeded(backup);
    const before = await productsDigest(where, serviceId);
    succeeded(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`));
    await editServiceDatabase(where, serviceId, (sqlite) => sqlite.prepare('DELETE FROM products').run());
    succeeded(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`));
    expect((await productsDigest(where, serviceId)).count).toBe(0);
    succeeded(await act(server.baseUrl, token, 'POST', `/api/backups/${backup.backup_id}/restore`));
    await running(serviceId);
    expect(await productsDigest(where, serviceId)).toEqual(before);
    // Its files belong to the user it runs as: the restored service can write its database.
    const reset = await fetch(`${(await getJson(server.baseUrl, `/api/service-erp/${serviceId}`, token)).body.url}web/reset_password`, {
      method: 'POST', body: new URLSearchParams({ login: 'admin' }),
    });
    expect(reset.status).toBe(503);
  }, 180_000);

  it('copies it, and the copy runs on the same data', async () => {
    const copied = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/copies`, { name: 'Unprivileged staging' });
    succeeded(copied);
    expect(await productsDigest(where, copied.service_id)).toEqual(await productsDigest(where, serviceId));
    succeeded(await act(server.baseUrl, token, 'POST', `/api/service-erp/${copied.service_id}/start`));
    await running(copied.service_id);
  }, 120_000);

  it('removes pruned backup files from the engine', async () => {
    const older = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    const newer = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    const removed = await pruneBackups(server.app.db, { node: 'any-node', defaults: { keepManual: 1, keepSafety: 0 } });
    expect(removed).toContain(older.backup_id);
    expect(removed).not.toContain(newer.backup_id);
  }, 120_000);
});
