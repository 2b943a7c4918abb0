// Lists contain only what the calling token reaches, filtered in SQL, in stable pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertService } from '../../src/db/repositories/services.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

describe('REST lists', () => {
  let server: TestServer;
  let team: SeededTeam;
  let otherTeam: SeededTeam;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    otherTeam = await seedTeam(server.app, { name: 'Other team' });
  });
  afterAll(async () => { await server.close(); });

  it('GET /api/service-erp lists the team\'s ERP services, not copies and not other teams\'', async () => {
    const token = await makeToken(server.app, team.teamId);
    const { status, body } = await getJson(server.baseUrl, '/api/service-erp', token.value);
    expect(status).toBe(200);
    expect(body.data.map((service: { id: string }) => service.id)).toEqual(team.serviceIds);
    expect(body.next_cursor).toBeNull();
    expect(body.data[0]).toMatchObject({ name: 'ERP A', is_copy: false, parent_id: null, state: 'stopped' });
  });

  it('GET /api/service-erp includes only the ERP services a restricted token reaches', async () => {
    const token = await makeToken(server.app, team.teamId, { services: [team.serviceIds[1]] });
    const { body } = await getJson(server.baseUrl, '/api/service-erp', token.value);
    expect(body.data.map((service: { id: string }) => service.id)).toEqual([team.serviceIds[1]]);
  });

  it('a token restricted to a service reaches its copies', async () => {
    const token = await makeToken(server.app, team.teamId, { services: [team.serviceIds[0]] });
    const { body } = await getJson(server.baseUrl, `/api/service-erp/${team.serviceIds[0]}/copies`, token.value);
    expect(body.data.map((copy: { id: string }) => copy.id)).toEqual([team.copyId]);
    const copy = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}`, token.value);
    expect(copy.body).toMatchObject({ id: team.copyId, is_copy: true, parent_id: team.serviceIds[0] });
  });

  it('a token restricted to services whose list became empty reaches nothing, not everything', async () => {
    const token = await makeToken(server.app, team.teamId, { services: [] });
    const { body } = await getJson(server.baseUrl, '/api/service-erp', token.value);
    expect(body.data).toEqual([]);
  });

  it('GET /api/servers includes only the servers a restricted token reaches', async () => {
    const token = await makeToken(server.app, team.teamId, { servers: [team.serverIds[0]] });
    const { body } = await getJson(server.baseUrl, '/api/servers', token.value);
    expect(body.data.map((row: { id: string }) => row.id)).toEqual([team.serverIds[0]]);
    // Which ERP services it reaches is set separately: all of them here.
    const services = await getJson(server.baseUrl, '/api/service-erp', token.value);
    expect(services.body.data).toHaveLength(2);
  });

  it('answers 404 for another team\'s service, exactly as for one that does not exist', async () => {
    const token = await makeToken(server.app, team.teamId);
    const foreign = await getJson(server.baseUrl, `/api/service-erp/${otherTeam.serviceIds[0]}`, token.value);
    const missing = await getJson(server.baseUrl, '/api/service-erp/svc_00000000000000000000', token.value);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
  });

  it('pages through many services in stable order with a cursor', async () => {
    const busy = await seedTeam(server.app, { name: 'Busy team' });
    for (let index = 0; index < 23; index += 1) {
      await insertService(server.app.db.kysely, { teamId: busy.teamId, serverId: busy.serverIds[0], name: `svc ${index}` });
    }
    const token = await makeToken(server.app, busy.teamId);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=10&cursor=${cursor}` : '?limit=10';
      const { status, body } = await getJson(server.baseUrl, `/api/service-erp${query}`, token.value);
      expect(status).toBe(200);
      expect(body.data.length).toBeLessThanOrEqual(10);
      seen.push(...body.data.map((service: { id: string }) => service.id));
      cursor = body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect([...seen].sort()).toEqual(seen);
  });

  it('refuses a cursor it did not issue with 400 naming the field', async () => {
    const token = await makeToken(server.app, team.teamId);
    const { status, body } = await getJson(server.baseUrl, '/api/service-erp?cursor=bm9wZQ', token.value);
    expect(status).toBe(400);
    expect(body.errors).toEqual([{ field: 'cursor', message: 'Unknown cursor.' }]);
  });

  it('GET /api/token shows what the calling token may do', async () => {
    const token = await makeToken(server.app, team.teamId, {
      permissions: ['services:operate'], services: [team.serviceIds[0]], acceptedBy: 'api', expiresOn: '2999-12-31',
    });
    const { status, body } = await getJson(server.baseUrl, '/api/token', token.value);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: token.id, full_access: false, accepted_by: 'api', permissions: ['services:operate', 'services:read'],
      services: [team.serviceIds[0]], servers: null, expires_on: '2999-12-31', team: { id: team.teamId, plan: 'starter' },
    });
  });
});
