// A move whose worker died in its write pause, after the service was started on its new server
// and before the switch (the worst moment: the old instance stopped, the new one running, the
// row still saying the old server), between two real engines: resumed, it ends moved with one
// instance running; given up after too many interruptions, it leaves the service running on its
// old server and nothing of it on the new one. Never two running instances, never no data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../../src/db/ids.js';
import { MAX_ATTEMPTS, performOperation } from '../../../src/engine/perform.js';
import type { MoveParameters } from '../../../src/engine/actions/move.js';
import { loadServerSpec, loadServiceSpec } from '../../../src/engine/service-spec.js';
import type { TestServer } from '../../support/fixtures.js';
import { dockerAvailable, testDockerApi } from '../docker/support/docker-engine.js';
import { secondEngineStartable, type SecondEngine } from '../docker/support/second-engine.js';
import { engineObjectsOf, teamCalls } from '../docker/support/team-calls.js';
import { startTwoEngineTeam, type TwoEngineTeam } from '../docker/support/two-engine-team.js';

const OWNER = 'crashed-worker';

describe.runIf(dockerAvailable && secondEngineStartable)('moveAction after its worker died before the switch', () => {
  const api = testDockerApi();
  let second: SecondEngine;
  let server: TestServer;
  let token: string;
  let teamId: string;
  let here: string;
  let there: string;
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);

  let team: TwoEngineTeam | undefined;

  beforeAll(async () => {
    team = await startTwoEngineTeam(api);
    ({ second, server, token, teamId, here, there } = team);
  }, 600_000);

  afterAll(async () => {
    await team?.close();
    await api.close();
  }, 180_000);

  /** A running demo service, and its move left as a worker that died after starting it on `there` leaves it; the operation's row. */
  async function interruptedMove(name: string) {
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: here, name });
    const serviceId = created.service_id as string;
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    const db = server.app.db.kysely;
    const { driver } = server.app.engine;
    const source = (await loadServiceSpec(db, serviceId))!;
    const target = { ...source, port: null, pid: null, server: await loadServerSpec(db, there) };
    await driver.transferData!(source, target);
    await driver.stop(source);
    await driver.transferData!(source, target);
    await driver.start(target, { portAssigned: async () => undefined, spawned: async () => undefined });
    const parameters: MoveParameters = { from_server_id: here, to_server_id: there, previous_state: 'running', rollback_of: null };
    const operationId = `op_${name.toLowerCase().padEnd(20, '0').slice(0, 20)}`;
    // Held by the dead worker: the live one does not take it while the test resumes it by hand.
    await db.insertInto('operations').values({
      id: operationId, team_id: teamId, kind: 'move', service_id: serviceId, server_id: there, state: 'running', reason: null,
      parameters: JSON.stringify(parameters), result: null, requested_by_token_id: null, requested_channel: 'api', idempotency_key: null,
      request_fingerprint: null, lease_owner: OWNER, lease_expires_at: '2999-01-01T00:00:00.000Z', created_at: nowIso(), started_at: nowIso(),
      finished_at: null, decision_id: null, steps: null, requested_by_user_id: null,
    }).execute();
    const runningOn = async () => ({ here: await runningContainers(api, serviceId), there: await runningContainers(second.api, serviceId) });
    const crashed = await runningOn();
    expect(crashed.here).toBe(0);
    expect(crashed.there).toBeGreaterThan(0);
    return { serviceId, operationId, runningOn };
  }

  it('ends the move when resumed: the service switches to the new server, running there only', async () => {
    const { serviceId, operationId, runningOn } = await interruptedMove('Resumed');
    await performOperation({ db: server.app.db, driver: server.app.engine.driver, onError: () => undefined }, (await server.app.db.kysely
      .selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirstOrThrow()), OWNER, 2);
    const operation = (await call('GET', `/api/operations/${operationId}`)).body;
    expect(operation, JSON.stringify(operation)).toMatchObject({ state: 'succeeded', result: { write_pause_ms: expect.any(Number) } });
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running', server_id: there });
    expect((await fetch(service.url, { signal: AbortSignal.timeout(10_000) })).status).toBeLessThan(500);
    const now = await runningOn();
    expect(now.here).toBe(0);
    expect(now.there).toBeGreaterThan(0);
    // The old server keeps its stopped data for the window.
    expect((await engineObjectsOf(api, serviceId)).volumes.length).toBeGreaterThan(0);
  }, 600_000);

  it('leaves the service running on its old server, and nothing of it on the new one, when given up', async () => {
    const { serviceId, operationId, runningOn } = await interruptedMove('Givenup');
    await performOperation({ db: server.app.db, driver: server.app.engine.driver, onError: () => undefined }, (await server.app.db.kysely
      .selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirstOrThrow()), OWNER, MAX_ATTEMPTS + 1);
    const operation = (await call('GET', `/api/operations/${operationId}`)).body;
    expect(operation).toMatchObject({ state: 'failed', reason: expect.stringMatching(/was interrupted/) });
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running', server_id: here });
    expect((await fetch(service.url, { signal: AbortSignal.timeout(10_000) })).status).toBeLessThan(500);
    expect((await runningOn()).here).toBeGreaterThan(0);
    expect(await engineObjectsOf(second.api, serviceId)).toEqual({ containers: [], volumes: [], networks: [] });
  }, 600_000);
});

async function runningContainers(api: ReturnType<typeof testDockerApi>, serviceId: string): Promise<number> {
  const filters = JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`], status: ['running'] });
  return (await api.json<unknown[]>('GET', '/containers/json', { query: { filters } })).length;
}
