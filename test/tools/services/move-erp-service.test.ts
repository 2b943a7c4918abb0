// move_erp_service's and rollback_erp_service_move's refusals against the real server and
// database, before anything is touched (no engine needed: each is refused when it is asked):
// the same server, a server the token does not reach, a server lost, unreachable or full, local
// servers, two servers of one engine, a rollback with no move or after its window; and a token
// that needs approval for a move waits for it like any action that interrupts a service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { makeDockerServer } from '../../../src/engine/docker/docker-servers.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../support/fixtures.js';
import { send } from '../../engine/support/engine-http.js';

let server: TestServer;
let team: SeededTeam;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  token = (await makeToken(server.app, team.teamId)).value;
});
afterAll(async () => { await server.close(); });

const db = () => server.app.db.kysely;
const move = (serviceId: string, serverId: string, as = token) => send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/move`, as, { server_id: serverId });
const rollback = (serviceId: string, as = token) => send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/move/rollback`, as);
/** A Docker server of the team on `host` (no engine is asked: the request is refused before). */
const dockerServer = async (name: string, host: string) => {
  const id = await insertServer(db(), { teamId: team.teamId, name });
  await makeDockerServer(db(), id, host);
  return id;
};

describe('move_erp_service', () => {
  it('answers 400 for the server the service is already on, and for local servers', async () => {
    const same = await move(team.serviceIds[0], team.serverIds[0]);
    expect(same.status).toBe(400);
    expect(same.body.detail).toBe('The service is already on that server.');
    const local = await move(team.serviceIds[0], team.serverIds[1]);
    expect(local.status).toBe(400);
    expect(local.body.detail).toBe('Only a service on a Docker server moves, and only to another Docker server.');
  });

  it('answers 404 for a server the token does not reach, as for one that does not exist', async () => {
    const limited = (await makeToken(server.app, team.teamId, { servers: [team.serverIds[0]] })).value;
    expect((await move(team.serviceIds[0], team.serverIds[1], limited)).status).toBe(404);
    expect((await move(team.serviceIds[0], 'srv_00000000000000000000')).status).toBe(404);
  });

  it('answers 409 with a sentence for a lost, unreachable or full server, and 400 for one of the same engine', async () => {
    const from = await dockerServer('from', 'tcp://10.0.0.1:2376');
    const serviceId = await insertService(db(), { teamId: team.teamId, serverId: from, name: 'Moving', state: 'running' });
    const lost = await dockerServer('lost', 'tcp://10.0.0.2:2376');
    await db().updateTable('servers').set({ state: 'lost' }).where('id', '=', lost).execute();
    expect((await move(serviceId, lost)).body).toMatchObject({ status: 409, detail: 'That server is lost: a service is moved only onto a ready server.' });
    const unreachable = await dockerServer('unreachable', 'tcp://10.0.0.3:2376');
    await db().updateTable('servers').set({ reachable: 0 }).where('id', '=', unreachable).execute();
    expect((await move(serviceId, unreachable)).body.detail).toBe("That server's Docker engine does not answer, so nothing was moved; try again once it does.");
    const full = await dockerServer('full', 'tcp://10.0.0.4:2376');
    await db().updateTable('servers').set({ capacity: 1 }).where('id', '=', full).execute();
    await insertService(db(), { teamId: team.teamId, serverId: full, name: 'Already there' });
    const refused = await move(serviceId, full);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe('That server is full: it hosts 1 of 1 ERP services and copies. Choose another server, or make room there first.');
    const twin = await dockerServer('twin', 'tcp://10.0.0.1:2376');
    const sameEngine = await move(serviceId, twin);
    expect(sameEngine.status).toBe(400);
    expect(sameEngine.body.detail).toBe("That server is the same Docker engine as the service's: choose a server on another engine.");
    // Nothing was queued by any of them.
    expect(await db().selectFrom('operations').select('id').where('service_id', '=', serviceId).execute()).toEqual([]);
  });

  it('answers 409 while a copy of the service is being made, and refuses a copy while the service moves', async () => {
    const from = await dockerServer('copying-from', 'tcp://10.0.3.1:2376');
    const to = await dockerServer('copying-to', 'tcp://10.0.3.2:2376');
    const serviceId = await insertService(db(), { teamId: team.teamId, serverId: from, name: 'Being copied', state: 'running' });
    const copy = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/copies`, token);
    expect(copy.status).toBe(202);
    const refused = await move(serviceId, to);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^ERP service svc_\w+ \(a copy of it is being made\) already has an operation in progress: op_\w+ \(copy, queued\)/);

    const other = await insertService(db(), { teamId: team.teamId, serverId: from, name: 'Moving away', state: 'running' });
    expect((await move(other, to)).status).toBe(202);
    const copyOfMoving = await send(server.baseUrl, 'POST', `/api/service-erp/${other}/copies`, token);
    expect(copyOfMoving.status).toBe(409);
    expect(copyOfMoving.body.detail).toMatch(/\(move, queued\)/);
  });

  it('waits for approval when the token needs it for a move, as for any action that interrupts a service', async () => {
    const from = await dockerServer('approval-from', 'tcp://10.0.1.1:2376');
    const to = await dockerServer('approval-to', 'tcp://10.0.1.2:2376');
    const serviceId = await insertService(db(), { teamId: team.teamId, serverId: from, name: 'Approved move', state: 'stopped' });
    const asking = (await makeToken(server.app, team.teamId, { needsApproval: ['move_erp_service'] })).value;
    const held = await move(serviceId, to, asking);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ kind: 'move', state: 'awaiting_approval', decision_id: expect.any(String) });
  });
});

describe('rollback_erp_service_move', () => {
  it('answers 409 when the service was not moved, and when its move\'s window ended', async () => {
    const none = await rollback(team.serviceIds[0]);
    expect(none.status).toBe(409);
    expect(none.body.detail).toBe('The service has no move to roll back: it was not moved, or its last move was already rolled back or its window ended.');
    const from = await dockerServer('window-from', 'tcp://10.0.2.1:2376');
    const to = await dockerServer('window-to', 'tcp://10.0.2.2:2376');
    const serviceId = await insertService(db(), { teamId: team.teamId, serverId: to, name: 'Moved long ago', state: 'running' });
    await db().insertInto('service_moves').values({
      id: 'mov_00000000000000000001', team_id: team.teamId, service_id: serviceId, operation_id: 'op_00000000000000000001',
      from_server_id: from, to_server_id: to, write_pause_ms: 900, switched_at: '2026-01-01T00:00:00.000Z',
      rollback_until: '2026-01-02T00:00:00.000Z', state: 'kept', removed_at: null,
    }).execute();
    const ended = await rollback(serviceId);
    expect(ended.status).toBe(409);
    expect(ended.body.detail).toBe("The rollback window of the service's last move ended at 2026-01-02T00:00:00.000Z, so the server it left no longer keeps it; " +
      'move it with move_erp_service instead.');
    // Within the window, a token that does not reach the server it left gets 404.
    await db().updateTable('service_moves').set({ rollback_until: new Date(Date.now() + 3_600_000).toISOString() }).execute();
    const limited = (await makeToken(server.app, team.teamId, { servers: [to] })).value;
    expect((await rollback(serviceId, limited)).status).toBe(404);
  });
});
