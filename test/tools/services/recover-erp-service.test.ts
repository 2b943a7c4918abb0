// recover_erp_service's refusals, and the operator's mark-server-lost, against the real server
// and database (local servers: no engine needed to refuse): a service whose server is not lost
// is never recovered elsewhere; once it is, a copy is refused, a server the token does not reach
// does not exist for it, a service without an off-site backup cannot be recovered, and the
// refusals name no id. Marking a server lost fails its services and what was queued on them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { admin } from '../../support/cli.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../support/fixtures.js';
import { send } from '../../engine/support/engine-http.js';

let server: TestServer;
let team: SeededTeam;
let token: string;
let spare: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  token = (await makeToken(server.app, team.teamId)).value;
  spare = await insertServer(server.app.db.kysely, { teamId: team.teamId, name: 'spare' });
});
afterAll(async () => { await server.close(); });

const recover = (serviceId: string, serverId: string, as = token) => send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/recover`, as, { server_id: serverId });

describe('recover_erp_service', () => {
  it('answers 409 while the service\'s server is not marked lost, since the service may still run there', async () => {
    const refused = await recover(team.serviceIds[0], spare);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe("The service's server is not marked lost, so the service may still run there: it is recovered " +
      'elsewhere only once the operator marked its server lost (teaminfra admin mark-server-lost).');
  });

  it('fails the services of a server marked lost, and the operations queued on them', async () => {
    const queued = await send(server.baseUrl, 'POST', `/api/service-erp/${team.serviceIds[0]}/backups`, token);
    expect(queued.status).toBe(202);
    const marked = await admin(server.dataDir, ['mark-server-lost', '--server', team.serverIds[0]]);
    expect(marked).toMatchObject({ server_id: team.serverIds[0], state: 'lost', failed_operations: [queued.body.id] });
    expect([...marked.failed_services].sort()).toEqual([team.serviceIds[0], team.copyId].sort());
    const service = await send(server.baseUrl, 'GET', `/api/service-erp/${team.serviceIds[0]}`, token);
    expect(service.body).toMatchObject({ state: 'failed' });
    const operation = await send(server.baseUrl, 'GET', `/api/operations/${queued.body.id}`, token);
    expect(operation.body).toMatchObject({ state: 'failed', reason: expect.stringMatching(/was marked lost by the operator/) });
    const backup = await send(server.baseUrl, 'GET', `/api/backups/${queued.body.backup_id}`, token);
    expect(backup.body).toMatchObject({ state: 'failed' });
    const types = (await server.app.db.kysely.selectFrom('events').select('type').where('team_id', '=', team.teamId).execute()).map((row) => row.type);
    expect(types).toContain('server.lost');
    // Again: nothing more to fail.
    expect(await admin(server.dataDir, ['mark-server-lost', '--server', team.serverIds[0]])).toMatchObject({ failed_services: [], failed_operations: [] });
  });

  it('once the server is lost: refuses a copy, a server the token does not reach, and a service with no off-site backup', async () => {
    const copy = await recover(team.copyId, spare);
    expect(copy.status).toBe(400);
    expect(copy.body.detail).toBe('A copy is not recovered: recover the service it copies, then make a new copy of it.');
    const limited = (await makeToken(server.app, team.teamId, { servers: [team.serverIds[0]] })).value;
    expect((await recover(team.serviceIds[0], spare, limited)).status).toBe(404);
    const none = await recover(team.serviceIds[0], spare);
    expect(none.status).toBe(409);
    expect(none.body.detail).toBe('The service has no backup stored off-site, so it cannot be recovered.');
    expect((await recover(team.serviceIds[0], 'srv_00000000000000000000')).status).toBe(404);
  });
});
