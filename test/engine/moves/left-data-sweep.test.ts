// What decides whether the sweep removes what a move left, against the real database and the
// engine's own driver (local servers: no engine to ask, so only a move the sweep must not touch
// on an engine is marked done): within the window nothing happens; a service that came back to
// the server it left keeps its data there; a lost server is not asked; a service an operation
// works on waits; a removal that fails is kept for the next sweep, with why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { removeLeftMoveData } from '../../../src/engine/moves/left-data-sweep.js';
import { seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../support/fixtures.js';

let server: TestServer;
let team: SeededTeam;
let sequence = 0;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
});
afterAll(async () => { await server.close(); });

const db = () => server.app.db.kysely;
const NOW = '2026-06-01T12:00:00.000Z';

/** A service on `on`, moved from `from` to `to`, whose window ends at `until`. */
async function moved(values: { on: string; from: string; to: string; until: string; state?: 'kept' | 'rolled_back' }): Promise<{ serviceId: string; moveId: string }> {
  sequence += 1;
  const serviceId = await insertService(db(), { teamId: team.teamId, serverId: values.on, name: `Moved ${sequence}`, state: 'running' });
  const moveId = `mov_${String(sequence).padStart(20, '0')}`;
  await db().insertInto('service_moves').values({
    id: moveId, team_id: team.teamId, service_id: serviceId, operation_id: `op_${String(sequence).padStart(20, '0')}`,
    from_server_id: values.from, to_server_id: values.to, write_pause_ms: 800, switched_at: '2026-05-31T12:00:00.000Z',
    rollback_until: values.until, state: values.state ?? 'kept', removed_at: null,
  }).execute();
  return { serviceId, moveId };
}

const stateOf = async (moveId: string) => (await db().selectFrom('service_moves').select('state').where('id', '=', moveId).executeTakeFirstOrThrow()).state;

describe('removeLeftMoveData', () => {
  it('leaves a move within its window, and removes nothing of a service that came back to the server it left', async () => {
    const [a, b] = team.serverIds;
    const within = await moved({ on: b, from: a, to: b, until: '2026-06-02T00:00:00.000Z' });
    const cameBack = await moved({ on: a, from: a, to: b, until: '2026-06-01T00:00:00.000Z' });
    const failures: string[] = [];
    const done = await removeLeftMoveData(db(), server.app.engine.driver, NOW, (_error, context) => failures.push(context));
    expect(done).toContain(cameBack.moveId);
    expect(done).not.toContain(within.moveId);
    expect(await stateOf(within.moveId)).toBe('kept');
    expect(await stateOf(cameBack.moveId)).toBe('removed');
  });

  it('asks nothing of a lost server, and waits while an operation works on the service', async () => {
    const [, b] = team.serverIds;
    const lost = await insertServer(db(), { teamId: team.teamId, name: 'gone' });
    await db().updateTable('servers').set({ state: 'lost' }).where('id', '=', lost).execute();
    const fromLost = await moved({ on: b, from: lost, to: b, until: '2026-06-01T00:00:00.000Z' });
    // Left on a lost server too: only the operation in flight keeps it from being done.
    const busy = await moved({ on: b, from: lost, to: b, until: '2026-06-01T00:00:00.000Z' });
    await db().insertInto('operations').values({
      id: 'op_busy0000000000000000', team_id: team.teamId, kind: 'backup', service_id: busy.serviceId, server_id: b, state: 'running',
      reason: null, parameters: '{}', result: null, requested_by_token_id: null, requested_channel: null, idempotency_key: null,
      request_fingerprint: null, lease_owner: null, lease_expires_at: null, created_at: NOW, started_at: NOW, finished_at: null,
      decision_id: null, steps: null, requested_by_user_id: null,
    }).execute();
    const done = await removeLeftMoveData(db(), server.app.engine.driver, NOW, () => undefined);
    expect(done).toContain(fromLost.moveId);
    expect(done).not.toContain(busy.moveId);
    expect(await stateOf(busy.moveId)).toBe('kept');
  });

  it('keeps a move whose removal failed for the next sweep, saying which move and server', async () => {
    const [a, b] = team.serverIds;
    // Local servers: the driver cannot remove anything from them, as an engine that does not answer.
    const failing = await moved({ on: b, from: a, to: b, until: '2026-06-01T00:00:00.000Z' });
    const failures: string[] = [];
    const done = await removeLeftMoveData(db(), server.app.engine.driver, NOW, (_error, context) => failures.push(context));
    expect(done).not.toContain(failing.moveId);
    expect(await stateOf(failing.moveId)).toBe('kept');
    expect(failures).toContain(`removing what the move ${failing.moveId} of service ${failing.serviceId} left on server ${a}`);
  });
});
