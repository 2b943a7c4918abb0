// The health watcher against the real server and database, its passes run by the test on a clock
// the test moves: services made running by the test answer at listeners of the test, which answer
// what the test says; emails go through the installation's relay to a real SMTP listener of the
// test; events, the activity trail and the REST API show what the watcher saw.
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/db/repositories/events.js';
import { setNotificationMail } from '../../src/db/repositories/incidents.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { nowIso } from '../../src/db/ids.js';
import { inWriteTransaction } from '../../src/engine/write-transaction.js';
import { changeServiceState } from '../../src/engine/state-changes.js';
import { send } from '../engine/support/engine-http.js';
import { startSmtpSink, type SmtpSink } from '../engine/support/smtp-sink.js';
import { makeToken, seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';

const INTERVAL_MS = 1_000;

/** A service's health path: answers `status` (200 unless the test says otherwise), counting the checks. */
interface Listener { port: number; status: number; checks: number; server: Server }

async function startListener(): Promise<Listener> {
  const listener = { port: 0, status: 200, checks: 0 } as Listener;
  listener.server = createServer((request, response) => {
    listener.checks += 1;
    response.writeHead(request.url === '/health' ? listener.status : 404, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
  listener.port = (listener.server.address() as { port: number }).port;
  return listener;
}

let now = Date.parse('2027-03-01T08:00:00.000Z');
let server: TestServer;
let smtp: SmtpSink;
let teamId: string;
let token: string;
let serverId: string;
const listeners: Listener[] = [];

/** A service of the team the test made running, reached at a listener of its own. */
async function runningService(name: string): Promise<{ id: string; listener: Listener }> {
  const listener = await startListener();
  listeners.push(listener);
  const db = server.app.db.kysely;
  const id = await insertService(db, { teamId, serverId, name, state: 'stopped' });
  await db.updateTable('erp_services').set({ port: listener.port }).where('id', '=', id).execute();
  await inWriteTransaction(db, (trx) => changeServiceState(trx, id, { state: 'running' }, { kind: 'start', operationId: null }, nowIso()));
  return { id, listener };
}

async function pass(seconds = 30) {
  now += seconds * 1000;
  return server.app.engine.health.tick();
}

const eventsOf = async (type: string, serviceId: string) => (await listEvents(server.app.db.kysely, teamId, { limit: 1000 }))
  .filter((event) => event.type === type && (JSON.parse(event.payload).data.service?.id ?? JSON.parse(event.payload).data.server?.id) === serviceId);

beforeAll(async () => {
  smtp = await startSmtpSink();
  server = await startTestServer({ engine: { clock: () => now, healthIntervalMs: INTERVAL_MS } });
  const db = server.app.db.kysely;
  teamId = await insertTeam(db, { name: 'Watched', plan: 'business', timezone: 'UTC' });
  serverId = await insertServer(db, { teamId, name: 'local' });
  token = (await makeToken(server.app, teamId)).value;
  await seedMembers(server.app, teamId, 'watched-password', ['owner', 'admin', 'member']);
  // The admin chose to hear only of backups; the owner keeps the defaults; a member is never emailed.
  const admin = await db.selectFrom('users').select('id').where('email', '=', 'admin@example.com').executeTakeFirstOrThrow();
  await db.insertInto('member_notifications').values({ team_id: teamId, user_id: admin.id, kinds: 'backup_failed', updated_at: nowIso() }).execute();
  await setNotificationMail(db, { host: '127.0.0.1', port: smtp.port, from: 'alerts@teaminfra.test' }, nowIso());
});

afterAll(async () => {
  await server?.close();
  await smtp?.close();
  for (const listener of listeners) listener.server.close();
});

describe('the health watcher', () => {
  beforeEach(() => {
    smtp.messages.length = 0;
  });
  afterEach(async () => {
    // What a test left unhealthy recovers before the next one counts its emails.
    for (const listener of listeners) listener.status = 200;
    await pass();
  });

  it('marks a service unhealthy after 3 failed checks in a row, with one event and one email, then recovered', async () => {
    const { id, listener } = await runningService('Shop');
    const healthy = await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token);
    expect(healthy.body).toMatchObject({ health: 'healthy', health_since: expect.any(String) });

    listener.status = 503;
    await pass();
    const failingSince = new Date(now).toISOString();
    await pass();
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body.health).toBe('healthy');
    const third = await pass();
    expect(third.unhealthy).toEqual([id]);
    const unhealthy = await eventsOf('service.unhealthy', id);
    expect(unhealthy).toHaveLength(1);
    expect(JSON.parse(unhealthy[0]!.payload).data).toMatchObject({
      checks_failed: 3, failing_since: failingSince, last_answer: 'HTTP 503', health_path: '/health',
      service: { id, health: 'unhealthy', health_since: failingSince },
    });
    const shown = await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token);
    expect(shown.body).toMatchObject({ health: 'unhealthy', health_since: failingSince, state: 'running' });
    const listed = await send(server.baseUrl, 'GET', '/api/service-erp?health=unhealthy', token);
    expect(listed.body.data.map((service: { id: string }) => service.id)).toEqual([id]);

    // One email, to the owner only (the admin chose otherwise, a member is never emailed).
    expect(smtp.messages.map((message) => message.to)).toEqual([['owner@example.com']]);
    const email = smtp.messages[0]!.data;
    expect(email).toContain('Subject: ERP service down: Shop');
    expect(email).toContain('the last one got: HTTP 503');
    expect(email).toContain(`Since: ${failingSince}`);
    expect(email).toContain(`/panel/services/${id}`);

    // Still failing: no second event, no second email.
    await pass();
    expect(await eventsOf('service.unhealthy', id)).toHaveLength(1);
    expect(smtp.messages).toHaveLength(1);

    listener.status = 200;
    expect((await pass()).recovered).toEqual([id]);
    expect(await eventsOf('service.recovered', id)).toHaveLength(1);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body.health).toBe('healthy');
    expect(smtp.messages).toHaveLength(2);
    expect(smtp.messages[1]!.data).toContain('Subject: Resolved: ERP service down: Shop');

    const trail = await send(server.baseUrl, 'GET', `/api/activity?service_id=${id}`, token);
    expect(trail.body.data.map((entry: { action: string; channel: string }) => `${entry.channel} ${entry.action}`))
      .toEqual(['health service.recovered', 'health service.unhealthy']);
  });

  it('mails at most one incident an hour for a service that flaps at every check', async () => {
    const { id, listener } = await runningService('Flaky');
    // Three failed checks, one answered, for 10 minutes of checks every 30 s: 5 times down, 5 times back.
    for (let check = 0; check < 20; check++) {
      listener.status = check % 4 === 3 ? 200 : 500;
      await pass();
    }
    expect(await eventsOf('service.unhealthy', id)).toHaveLength(5);
    expect(await eventsOf('service.recovered', id)).toHaveLength(5);
    expect(smtp.messages.map((message) => /Subject: (.*)/.exec(message.data)?.[1]))
      .toEqual(['ERP service down: Flaky', 'Resolved: ERP service down: Flaky']);

    // An hour after the first incident began, the next one is mailed again.
    now += 3_600_000;
    for (let check = 0; check < 3; check++) {
      listener.status = 500;
      await pass();
    }
    expect(smtp.messages).toHaveLength(3);
  });

  it('shows a failed service unhealthy and a stopped one unknown, and mails that it failed', async () => {
    const { id } = await runningService('Gone');
    const db = server.app.db.kysely;
    await inWriteTransaction(db, (trx) =>
      changeServiceState(trx, id, { state: 'failed', reason: 'Its process is no longer running.' }, { kind: 'reconcile', operationId: null }, nowIso()));
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body).toMatchObject({ state: 'failed', health: 'unhealthy' });
    await pass();
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]!.data).toContain('ERP service "Gone" failed: Its process is no longer running.');
    await inWriteTransaction(db, (trx) => changeServiceState(trx, id, { state: 'stopped' }, { kind: 'stop', operationId: null }, nowIso()));
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body).toMatchObject({ state: 'stopped', health: 'unknown' });
    await pass();
    expect(smtp.messages[1]!.data).toContain('Subject: Resolved: ERP service down: Gone');
    expect(smtp.messages[1]!.data).toContain('ERP service "Gone" was stopped.');
  });

  it('refuses a health filter it does not know, naming the values', async () => {
    const refused = await send(server.baseUrl, 'GET', '/api/service-erp?health=sick', token);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('unhealthy');
  });

  it('shows every server reachable when none is a Docker engine', async () => {
    const listed = await send(server.baseUrl, 'GET', '/api/servers', token);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: serverId, reachable: true })]);
  });
});
