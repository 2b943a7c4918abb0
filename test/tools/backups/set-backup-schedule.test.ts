// set_backup_schedule against the real server and database, over REST and MCP: lowering a
// schedule's retention so that backups that exist would be removed is destructive. It needs
// backups:delete besides backups:create (403 with the usual sentence otherwise, nothing changed),
// can wait for approval, and each backup the next retention pass removes is in the activity trail,
// removed by the schedule and naming who last changed it. Raising or keeping retention, or
// lowering it while nothing would go, stays backups:create alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/db/ids.js';
import { DEFAULT_RETENTION, pruneBackups } from '../../../src/engine/backup-retention.js';
import { connectHttp, problemIn } from '../../mcp/clients.js';
import { send, waitForOperation } from '../../engine/support/engine-http.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../support/fixtures.js';

const DAY = 86_400_000;
const DEFAULT_KEEP = { frequency: 'daily', time: '03:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6 } as const;
const LOWERED = { ...DEFAULT_KEEP, keep_daily: 2, keep_weekly: 0, keep_monthly: 0 };
const RAISED = { ...DEFAULT_KEEP, keep_daily: 30 };

let server: TestServer;
let team: SeededTeam;
let full: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  full = (await makeToken(server.app, team.teamId)).value;
});
afterAll(async () => { await server.close(); });

const path = (serviceId: string) => `/api/service-erp/${serviceId}/backup-schedule`;

/** `days` completed scheduled backups of a service, one a day at 03:00 UTC up to yesterday, as the scheduler leaves them; their ids. */
async function scheduledBackups(serviceId: string, days: number, teamId = team.teamId): Promise<string[]> {
  const today = Math.floor(Date.now() / DAY) * DAY;
  const ids: string[] = [];
  for (let day = days; day >= 1; day -= 1) {
    const id = newId('bak');
    const at = new Date(today - day * DAY + 3 * 3_600_000).toISOString();
    await server.app.db.kysely.insertInto('backups').values({
      id, team_id: teamId, service_id: serviceId, state: 'completed', kind: 'scheduled', size_bytes: 10, sha256: '0'.repeat(64),
      file_path: `${server.dataDir}/backups/${serviceId}/${id}.sqlite.zst`, operation_id: null, reason: null, created_at: at, completed_at: at,
    }).execute();
    ids.push(id);
  }
  return ids;
}

/**
 * A team of its own, 10 days of scheduled backups of its first service, a token that may lower
 * that service's retention but needs approval to, and a token that answers decisions.
 */
async function carefulAgentsTeam() {
  const { teamId, serviceIds: [serviceId] } = await seedTeam(server.app);
  await scheduledBackups(serviceId, 10, teamId);
  const agent = await makeToken(server.app, teamId, { permissions: ['backups:create', 'backups:delete'], needsApproval: ['set_backup_schedule'] });
  const approver = (await makeToken(server.app, teamId, { permissions: ['decisions:answer'] })).value;
  return { teamId, serviceId, agent, approver };
}

const scheduleOf = async (serviceId: string) => (await send(server.baseUrl, 'GET', path(serviceId), full)).body;

describe('set_backup_schedule', () => {
  it('refuses a token with only backups:create, over REST and MCP, when lowering would remove backups, and changes nothing', async () => {
    const serviceId = team.serviceIds[0];
    await scheduledBackups(serviceId, 10);
    const creator = (await makeToken(server.app, team.teamId, { permissions: ['backups:create'] })).value;
    const before = await scheduleOf(serviceId);

    const rest = await send(server.baseUrl, 'PUT', path(serviceId), creator, LOWERED);
    expect(rest.status).toBe(403);
    expect(rest.body).toMatchObject({
      code: 'missing_permission', permission: 'backups:delete', detail: 'This API token does not have the backups:delete scope.',
    });

    const { client, close } = await connectHttp(server.baseUrl, creator);
    try {
      const result = await client.callTool({ name: 'set_backup_schedule', arguments: { service_id: serviceId, ...LOWERED } });
      expect(problemIn(result)).toMatchObject({ code: 'missing_permission', detail: 'This API token does not have the backups:delete scope.' });
    } finally {
      await close();
    }
    expect(await scheduleOf(serviceId)).toEqual(before);
  });

  it('lets a token with only backups:create raise or keep retention, and lower it while no backup that exists would go', async () => {
    const [withBackups, without] = [team.serviceIds[1], team.copyId];
    await scheduledBackups(withBackups, 10);
    const creator = (await makeToken(server.app, team.teamId, { permissions: ['backups:create'] })).value;
    expect((await send(server.baseUrl, 'PUT', path(withBackups), creator, RAISED)).status).toBe(200);
    expect((await send(server.baseUrl, 'PUT', path(withBackups), creator, RAISED)).status).toBe(200);
    // 30 days keep all 10 backups; 7 days (with the weeks' and months' newest) cannot keep the three oldest days' all.
    expect((await send(server.baseUrl, 'PUT', path(withBackups), creator, DEFAULT_KEEP)).status).toBe(403);
    // A copy has no scheduled backup yet: lowering its retention removes nothing.
    const lowered = await send(server.baseUrl, 'PUT', path(without), creator, LOWERED);
    expect(lowered.status).toBe(200);
    expect(lowered.body).toMatchObject({ keep_daily: 2, keep_weekly: 0, keep_monthly: 0 });
  });

  it("lowers retention for a token with backups:create and backups:delete; the next pass records each removal as the schedule's, naming that token", async () => {
    const other = await seedTeam(server.app);
    const serviceId = other.serviceIds[0];
    const ids = await scheduledBackups(serviceId, 10, other.teamId);
    const deleter = await makeToken(server.app, other.teamId, { name: 'retention robot', permissions: ['backups:create', 'backups:delete'] });
    const put = await send(server.baseUrl, 'PUT', path(serviceId), deleter.value, LOWERED);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ service_id: serviceId, keep_daily: 2, keep_weekly: 0, keep_monthly: 0 });

    // The pass covers every team: only this service's backups are this test's to count.
    const removed = (await pruneBackups(server.app.db, { node: 'this-node', defaults: DEFAULT_RETENTION })).filter((id) => ids.includes(id));
    expect(removed.sort()).toEqual(ids.slice(0, 8).sort());
    const auditor = (await makeToken(server.app, other.teamId, { permissions: ['activity:read'] })).value;
    const trail = (await send(server.baseUrl, 'GET', '/api/activity?action=prune_backup', auditor)).body.data;
    expect(trail.map((entry: { target: { id: string } }) => entry.target.id).sort()).toEqual(ids.slice(0, 8).sort());
    for (const entry of trail) {
      expect(entry).toMatchObject({
        channel: 'schedule', action: 'prune_backup', outcome: 'allowed', code: null, member: null,
        token: { id: deleter.id, name: 'retention robot', source: 'panel' }, target: { type: 'backup' },
      });
    }
    // The lowering itself is in the trail too, as the token's action.
    await server.app.audit.flush();
    const set = (await send(server.baseUrl, 'GET', `/api/activity?action=set_backup_schedule&service_id=${serviceId}`, auditor)).body.data;
    expect(set).toEqual([expect.objectContaining({ channel: 'rest', outcome: 'allowed', token: expect.objectContaining({ id: deleter.id }) })]);
  });

  it('holds a lowering for approval for a token that needs it, sets the schedule once approved, and never holds a raise', async () => {
    const { teamId, serviceId, agent: { value: agent }, approver } = await carefulAgentsTeam();
    const reader = (await makeToken(server.app, teamId)).value;
    const before = (await send(server.baseUrl, 'GET', path(serviceId), reader)).body;

    expect((await send(server.baseUrl, 'PUT', path(serviceId), agent, RAISED)).status).toBe(200);
    const raised = (await send(server.baseUrl, 'GET', path(serviceId), reader)).body;
    expect(raised).toMatchObject({ keep_daily: 30 });

    const held = await send(server.baseUrl, 'PUT', path(serviceId), agent, LOWERED);
    expect(held.status).toBe(202);
    expect(held.headers.get('location')).toBe(`/api/operations/${held.body.id}`);
    expect(held.body).toMatchObject({ kind: 'set_backup_schedule', state: 'awaiting_approval', service_id: serviceId });
    expect((await send(server.baseUrl, 'GET', path(serviceId), reader)).body).toEqual(raised);

    const answered = await send(server.baseUrl, 'POST', `/api/decisions/${held.body.decision_id}/answer`, approver, { answer: 'approve' });
    expect(answered.status).toBe(200);
    expect(await waitForOperation(server.baseUrl, agent, held.body.id)).toMatchObject({ state: 'succeeded', reason: null });
    expect((await send(server.baseUrl, 'GET', path(serviceId), reader)).body).toMatchObject({ keep_daily: 2, keep_weekly: 0, keep_monthly: 0 });
    expect(before).toMatchObject({ keep_daily: 7 });
  });

  it('checks backups:delete again when approved: taken away meanwhile, the operation fails and the schedule stays', async () => {
    const { serviceId, agent, approver } = await carefulAgentsTeam();
    const held = await send(server.baseUrl, 'PUT', path(serviceId), agent.value, LOWERED);
    expect(held.status).toBe(202);
    await server.app.db.kysely.updateTable('api_tokens').set({ permissions: 'backups:create' }).where('id', '=', agent.id).execute();
    await send(server.baseUrl, 'POST', `/api/decisions/${held.body.decision_id}/answer`, approver, { answer: 'approve' });
    const ended = await waitForOperation(server.baseUrl, agent.value, held.body.id);
    expect(ended.state).toBe('failed');
    expect(ended.reason).toBe('Approved, but it could not be carried out: This API token does not have the backups:delete scope.');
    expect(await server.app.db.kysely.selectFrom('backup_schedules').select('keep_daily').where('service_id', '=', serviceId).executeTakeFirst())
      .toBeUndefined();
  });

  it('over MCP, waits for the approval of a held lowering and answers with its operation, succeeded', async () => {
    const { teamId, serviceId, agent: { value: agent }, approver } = await carefulAgentsTeam();
    // The suites' own setting answers an MCP action at once (vitest.config.ts); this one waits, as by default.
    const wait = process.env.TEAMINFRA_MCP_WAIT_SECONDS;
    process.env.TEAMINFRA_MCP_WAIT_SECONDS = '30';
    const { client, close } = await connectHttp(server.baseUrl, agent);
    try {
      const call = client.callTool({ name: 'set_backup_schedule', arguments: { service_id: serviceId, ...LOWERED } });
      const decision = await pendingDecisionOf(teamId);
      expect((await send(server.baseUrl, 'POST', `/api/decisions/${decision}/answer`, approver, { answer: 'approve' })).status).toBe(200);
      const result = await call;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ kind: 'set_backup_schedule', state: 'succeeded', service_id: serviceId });
    } finally {
      process.env.TEAMINFRA_MCP_WAIT_SECONDS = wait;
      await close();
    }
    const schedule = await server.app.db.kysely.selectFrom('backup_schedules').select(['keep_daily', 'changed_by_type'])
      .where('service_id', '=', serviceId).executeTakeFirstOrThrow();
    expect(schedule).toEqual({ keep_daily: 2, changed_by_type: 'token' });
  });
});

/** The id of the team's pending decision, once there is one (within 10 s). */
async function pendingDecisionOf(teamId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const row = await server.app.db.kysely.selectFrom('decisions').select('id').where('team_id', '=', teamId).where('state', '=', 'pending')
      .executeTakeFirst();
    if (row) return row.id;
    if (Date.now() > deadline) throw new Error(`no pending decision in team ${teamId} after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
