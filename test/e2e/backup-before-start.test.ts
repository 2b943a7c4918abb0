// A service's first backup, before it was ever started: provisioning gave it its database (the
// one its process would create on a first start), so there is something to back up. Also for a
// service the operator's command created, which no worker provisioned: the backup provisions it
// first (review: "has no database yet").
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decompress as zstdDecompress } from 'zstd-napi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, killProcessesMatching, processesMatching, send } from '../engine/support/engine-http.js';
import { countProducts, download } from '../engine/support/service-data.js';

describe('POST /api/service-erp/{id}/backups of a service never started', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
  });
  afterAll(async () => {
    const dataDir = server.dataDir;
    await server.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  /** Backs the service up, downloads the file, and counts the products in the database it holds. */
  async function productsInFirstBackup(serviceId: string): Promise<number> {
    const done = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect(done).toMatchObject({ state: 'succeeded', reason: null });
    const file = await download(`${server.baseUrl}/api/backups/${done.backup_id}/download`, token);
    expect(file.status).toBe(200);
    const unpacked = join(server.dataDir, `${done.backup_id}.sqlite`);
    writeFileSync(unpacked, zstdDecompress(file.bytes));
    return countProducts(unpacked);
  }

  it('completes right after the service was created through the API, with the seeded data', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: team.serverIds[0], name: 'Fresh ERP' });
    expect(created.state).toBe('succeeded');
    expect(await productsInFirstBackup(created.service_id)).toBe(5);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${created.service_id}`, token)).body.state).toBe('stopped');
    expect(processesMatching(created.service_id)).toEqual([]);
  });

  it('completes for a service the operator created, which no worker provisioned', async () => {
    expect(await productsInFirstBackup(team.serviceIds[1])).toBe(5);
    expect(processesMatching(team.serviceIds[1])).toEqual([]);
  });
});
