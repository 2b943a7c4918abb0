// What the engine's restart counts of a service make of it, against a real database, on times the
// test gives: 3 restarts within 5 minutes start a crash loop (once), told in the operation that
// started it; 5 minutes without one end it; restarts further apart than that are no crash loop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, nowIso } from '../../src/db/ids.js';
import { listEvents } from '../../src/db/repositories/events.js';
import { listWatchedServices } from '../../src/db/repositories/service-health.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { recordRestarts } from '../../src/health/crash-loops.js';
import { startTestServer, type TestServer } from '../support/fixtures.js';

let server: TestServer;
let teamId: string;
let serverId: string;

beforeAll(async () => {
  server = await startTestServer();
  teamId = await insertTeam(server.app.db.kysely, { name: 'Restarting', plan: 'business', timezone: 'UTC' });
  serverId = await insertServer(server.app.db.kysely, { teamId, name: 'engine' });
});
afterAll(async () => {
  await server.close();
});

const start = Date.parse('2027-05-01T10:00:00.000Z');
const at = (seconds: number) => new Date(start + seconds * 1000).toISOString();

/** Reads the service as the watcher does, then records `count` at `seconds` after the start. */
async function restarts(serviceId: string, count: number, seconds: number, operationId: string | null = null) {
  const [row] = (await listWatchedServices(server.app.db.kysely, '', 1000)).filter((service) => service.id === serviceId);
  return recordRestarts(server.app.db.kysely, row!, count, at(seconds), operationId);
}

const eventsOf = async (serviceId: string) => (await listEvents(server.app.db.kysely, teamId, { limit: 1000 }))
  .map((event) => ({ type: event.type, data: JSON.parse(event.payload).data }))
  .filter((event) => event.data.service?.id === serviceId && ['service.crash_loop', 'service.recovered'].includes(event.type));

describe('crash loops from restart counts', () => {
  it('starts one at the third restart within 5 minutes, says so in the operation, and ends it after 5 quiet minutes', async () => {
    const db = server.app.db.kysely;
    const serviceId = await insertService(db, { teamId, serverId, name: 'Looping', state: 'running' });
    const operationId = newId('op');
    await db.insertInto('operations').values({
      id: operationId, team_id: teamId, kind: 'start', service_id: serviceId, server_id: serverId, state: 'succeeded', parameters: '{}',
      created_at: nowIso(), finished_at: nowIso(),
    }).execute();
    // The first reading is a base: restarts before the watcher looked are not counted.
    expect(await restarts(serviceId, 4, 0)).toBeNull();
    expect(await restarts(serviceId, 5, 10)).toBeNull();
    expect(await restarts(serviceId, 6, 20)).toBeNull();
    expect(await restarts(serviceId, 7, 30, operationId)).toBe('crash_loop');
    expect(await restarts(serviceId, 9, 40, operationId)).toBeNull();
    const events = await eventsOf(serviceId);
    expect(events).toEqual([{ type: 'service.crash_loop', data: expect.objectContaining({ restarts: 3, window_minutes: 5, operation_id: operationId }) }]);
    const operation = await db.selectFrom('operations').select('result').where('id', '=', operationId).executeTakeFirstOrThrow();
    expect(JSON.parse(operation.result as string).crash_loop).toContain('restarted ERP service "Looping" 3 times within 5 minutes');

    expect(await restarts(serviceId, 9, 40 + 299)).toBeNull();
    expect(await restarts(serviceId, 9, 40 + 301)).toBe('recovered');
    expect((await eventsOf(serviceId)).map((event) => event.type)).toEqual(['service.crash_loop', 'service.recovered']);
    expect((await eventsOf(serviceId))[1]!.data).toMatchObject({ after: 'crash_loop', since: at(30) });
  });

  it('sees no crash loop in restarts more than 5 minutes apart, nor in a count that went down (containers replaced)', async () => {
    const serviceId = await insertService(server.app.db.kysely, { teamId, serverId, name: 'Now and then', state: 'running' });
    expect(await restarts(serviceId, 0, 0)).toBeNull();
    for (let restart = 1; restart <= 4; restart++) expect(await restarts(serviceId, restart, restart * 160)).toBeNull();
    expect(await restarts(serviceId, 0, 800)).toBeNull();
    expect(await restarts(serviceId, 1, 810)).toBeNull();
    expect(await eventsOf(serviceId)).toEqual([]);
  });
});
