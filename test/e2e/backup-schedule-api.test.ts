// A service's backup schedule over REST and MCP: what is set is read back on both channels, bad
// input is a 400 naming the field, and a token limited to one service cannot see another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { send } from '../engine/support/engine-http.js';
import { connectHttp, problemIn } from '../mcp/clients.js';

let server: TestServer;
let team: SeededTeam;
let bearer: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app, { timezone: 'Europe/Paris' });
  bearer = (await makeToken(server.app, team.teamId)).value;
});
afterAll(async () => { await server.close(); });

const path = (serviceId: string) => `/api/service-erp/${serviceId}/backup-schedule`;

describe('the backup schedule of a service', () => {
  it("starts as the team's default: daily, keeping 7 daily, 4 weekly and 6 monthly backups; a copy's is off", async () => {
    const service = await send(server.baseUrl, 'GET', path(team.serviceIds[1]), bearer);
    expect(service.status).toBe(200);
    expect(service.body).toMatchObject({ service_id: team.serviceIds[1], frequency: 'daily', keep_daily: 7, keep_weekly: 4, keep_monthly: 6 });
    expect(Date.parse(service.body.next_run_at)).toBeGreaterThan(Date.now());
    const copy = await send(server.baseUrl, 'GET', path(team.copyId), bearer);
    expect(copy.body).toMatchObject({ frequency: 'off', next_run_at: null });
  });

  it('is set through REST and read back, its next run at the time of day in the team\'s time zone', async () => {
    const schedule = { frequency: 'daily', time: '04:15', keep_daily: 3, keep_weekly: 2, keep_monthly: 1 };
    const put = await send(server.baseUrl, 'PUT', path(team.serviceIds[0]), bearer, schedule);
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ service_id: team.serviceIds[0], ...schedule, next_run_at: expect.any(String) });
    const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' });
    expect(paris.format(new Date(put.body.next_run_at))).toBe('04:15');
    const next = Date.parse(put.body.next_run_at);
    expect(next).toBeGreaterThan(Date.now());
    expect(next).toBeLessThanOrEqual(Date.now() + 86_400_000);
    const got = await send(server.baseUrl, 'GET', path(team.serviceIds[0]), bearer);
    expect(got.body).toEqual(put.body);
  });

  it('is set through MCP and read back through MCP and REST', async () => {
    const { client, close } = await connectHttp(server.baseUrl, bearer);
    const schedule = { frequency: 'hourly', time: '00:20', keep_daily: 2, keep_weekly: 0, keep_monthly: 0 };
    const set = await client.callTool({ name: 'set_backup_schedule', arguments: { service_id: team.serviceIds[1], ...schedule } });
    const got = await client.callTool({ name: 'get_backup_schedule', arguments: { service_id: team.serviceIds[1] } });
    await close();
    expect(set.isError).toBeFalsy();
    expect(got.structuredContent).toEqual(set.structuredContent);
    expect(got.structuredContent).toMatchObject({ service_id: team.serviceIds[1], ...schedule });
    expect(new Date((got.structuredContent as { next_run_at: string }).next_run_at).getUTCMinutes()).toBe(20);
    const rest = await send(server.baseUrl, 'GET', path(team.serviceIds[1]), bearer);
    expect(rest.body).toEqual(got.structuredContent);
  });

  it('turned off, has no next run', async () => {
    const put = await send(server.baseUrl, 'PUT', path(team.copyId), bearer, { frequency: 'off', time: '00:00', keep_daily: 1, keep_weekly: 0, keep_monthly: 0 });
    expect(put.body).toMatchObject({ frequency: 'off', next_run_at: null });
  });

  it.each([
    ['time', { time: '24:00' }],
    ['time', { time: '7:30' }],
    ['keep_daily', { keep_daily: 0 }],
    ['keep_weekly', { keep_weekly: -1 }],
    ['keep_monthly', { keep_monthly: 1.5 }],
    ['keep_monthly', { keep_monthly: 100_000 }],
    ['frequency', { frequency: 'weekly' }],
  ])('refuses an invalid %s with a 400 naming it, and keeps the schedule it had', async (field, change) => {
    const before = (await send(server.baseUrl, 'GET', path(team.serviceIds[0]), bearer)).body;
    const body = { frequency: 'daily', time: '01:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6, ...change };
    const put = await send(server.baseUrl, 'PUT', path(team.serviceIds[0]), bearer, body);
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ code: 'validation_failed', errors: [{ field }] });
    expect((await send(server.baseUrl, 'GET', path(team.serviceIds[0]), bearer)).body).toEqual(before);
  });

  it('refuses an invalid time over MCP too, naming the field', async () => {
    const { client, close } = await connectHttp(server.baseUrl, bearer);
    const result = await client.callTool({
      name: 'set_backup_schedule',
      arguments: { service_id: team.serviceIds[0], frequency: 'daily', time: 'noon', keep_daily: 7, keep_weekly: 4, keep_monthly: 6 },
    });
    await close();
    expect(problemIn(result)).toMatchObject({ code: 'validation_failed', status: 400, errors: [{ field: 'time' }] });
  });

  it("answers 404 to a token limited to one service for another service's schedule, and changes nothing", async () => {
    const limited = (await makeToken(server.app, team.teamId, { services: [team.serviceIds[0]] })).value;
    const before = (await send(server.baseUrl, 'GET', path(team.serviceIds[1]), bearer)).body;
    const put = await send(server.baseUrl, 'PUT', path(team.serviceIds[1]), limited, { frequency: 'off', time: '00:00', keep_daily: 1, keep_weekly: 0, keep_monthly: 0 });
    expect(put.status).toBe(404);
    expect(put.body).toMatchObject({ code: 'not_found' });
    expect((await send(server.baseUrl, 'GET', path(team.serviceIds[1]), limited)).status).toBe(404);
    expect((await send(server.baseUrl, 'GET', path(team.serviceIds[1]), bearer)).body).toEqual(before);
    const own = await send(server.baseUrl, 'PUT', path(team.serviceIds[0]), limited, { frequency: 'daily', time: '05:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6 });
    expect(own.status).toBe(200);
  });

  it('needs backups:create to change it, and backups:read to read it', async () => {
    const reader = (await makeToken(server.app, team.teamId, { permissions: ['backups:read'] })).value;
    expect((await send(server.baseUrl, 'GET', path(team.serviceIds[0]), reader)).status).toBe(200);
    const put = await send(server.baseUrl, 'PUT', path(team.serviceIds[0]), reader, { frequency: 'off', time: '00:00', keep_daily: 1, keep_weekly: 0, keep_monthly: 0 });
    expect(put.status).toBe(403);
    expect(put.body).toMatchObject({ code: 'missing_permission' });
  });
});
