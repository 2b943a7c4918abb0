// An image without a snapshot command is backed up by stop-copy-start: the service is stopped,
// its data directory read, and started again. That copy must be the real data: when the data
// directory holds no file (the image writes its data somewhere else than where the volume is
// mounted) the backup fails and says why, instead of completing with an archive that holds no
// database and a restore that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type TestServer } from '../../support/fixtures.js';
import { act } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { derivedImage, startDockerTeam, type DockerTeam } from './support/docker-team.js';
import { productsDigest } from './support/service-volume.js';

describe.runIf(dockerAvailable)('backups of an image without a snapshot command', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let team: DockerTeam;
  const images: string[] = [];
  const servers: string[] = [];

  /** The bundled image with these labels changed, on a server of its own. */
  const serverOfImage = async (name: string, labels: string[]) => {
    const image = await derivedImage(api, team.image, `teaminfra-test-${name}:${Date.now().toString(36)}`, labels.map((label) => `LABEL ${label}`));
    images.push(image);
    const serverId = await team.addServer(name, image);
    servers.push(serverId);
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name });
    expect(created.state).toBe('succeeded');
    expect((await act(server.baseUrl, token, 'POST', `/api/service-erp/${created.service_id}/start`)).state).toBe('succeeded');
    return { serverId, image, serviceId: created.service_id as string };
  };

  beforeAll(async () => {
    team = await startDockerTeam();
    ({ server, token } = team);
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    for (const serverId of servers) await removeEverythingOf(api, serverId);
    for (const image of images) await api.json('DELETE', `/images/${encodeURIComponent(image)}`, { query: { force: 1 }, accept: [404, 409] });
    await api.close();
  });

  it('stops the service, copies its data directory and starts it again: the backup holds its database', async () => {
    const { serverId, image, serviceId } = await serverOfImage('stopcopy', ['io.teaminfra.snapshot-command=""']);
    const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect([backup.state, backup.reason]).toEqual(['succeeded', null]);
    expect((await getJson(server.baseUrl, `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
    // Restored onto itself, the same products are there: the archive held the database.
    const before = await productsDigest({ api, db: server.app.db.kysely, image, serverId }, serviceId);
    expect(before.count).toBeGreaterThan(0);
    expect((await act(server.baseUrl, token, 'POST', `/api/backups/${backup.backup_id}/restore`)).state).toBe('succeeded');
    expect(await productsDigest({ api, db: server.app.db.kysely, image, serverId }, serviceId)).toEqual(before);
  }, 180_000);

  it('fails, naming the data directory and the label, when the image keeps its data outside the volume', async () => {
    const { serviceId } = await serverOfImage('elsewhere', ['io.teaminfra.snapshot-command=""', 'io.teaminfra.data-dir=/elsewhere']);
    const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect(backup.state).toBe('failed');
    expect(backup.reason).toBe("The service's data directory (/elsewhere, where its volume is mounted) holds no file, so there is no data to back up. " +
      'If the image keeps its data in another directory, give the image the label io.teaminfra.data-dir naming it.');
    const backups = (await getJson(server.baseUrl, `/api/service-erp/${serviceId}/backups`, token)).body.data as { state: string }[];
    expect(backups.map((item) => item.state)).toEqual(['failed']);
    expect((await getJson(server.baseUrl, `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
  }, 120_000);
});
