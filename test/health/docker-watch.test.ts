// The health watcher on real Docker engines, with a short interval and the real clock: a service
// whose process is frozen inside its container (it runs, and answers nothing) is found unhealthy
// within 3 intervals, with one event and one email to a real SMTP listener, and recovered once it
// is thawed; a deploy whose container then exits every 5 s succeeds, and is reported as a crash
// loop, in the operation's result too; a second dockerd stopped and started again makes its
// server unreachable, then recovered.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/db/repositories/events.js';
import { setNotificationMail } from '../../src/db/repositories/incidents.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { nowIso } from '../../src/db/ids.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, testDockerApi } from '../engine/docker/support/docker-engine.js';
import { derivedImage, startDockerTeam, type DockerTeam } from '../engine/docker/support/docker-team.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from '../engine/docker/support/second-engine.js';
import { send, waitForOperation } from '../engine/support/engine-http.js';
import { startSmtpSink, type SmtpSink } from '../engine/support/smtp-sink.js';
import { seedMembers } from '../support/fixtures.js';

const INTERVAL_MS = 1_000;

describe.runIf(dockerAvailable)('the health watcher on Docker engines', () => {
  const api = testDockerApi();
  let team: DockerTeam;
  let smtp: SmtpSink;
  let serverId: string;
  let crashingImage: string | undefined;
  let crashServerId: string | undefined;

  const eventsAbout = async (type: string, id: string) => (await listEvents(team.server.app.db.kysely, team.teamId, { limit: 1000 }))
    .filter((event) => event.type === type)
    .map((event) => JSON.parse(event.payload).data)
    .filter((data) => (data.service?.id ?? data.server?.id) === id);

  /** Waits for the first `type` event about `id`, for at most `timeoutMs`; the time it took. */
  const waitForEvent = async (type: string, id: string, timeoutMs: number): Promise<number> => {
    const started = Date.now();
    while ((await eventsAbout(type, id)).length === 0) {
      if (Date.now() - started > timeoutMs) throw new Error(`no ${type} about ${id} within ${timeoutMs} ms`);
      await sleep(100);
    }
    return Date.now() - started;
  };

  const startedService = async (server: string, name: string) => {
    const created = await send(team.server.baseUrl, 'POST', '/api/service-erp', team.token, { server_id: server, name });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(await waitForOperation(team.server.baseUrl, team.token, created.body.id, 120_000)).toMatchObject({ state: 'succeeded' });
    const serviceId = created.body.service_id as string;
    const started = await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, team.token);
    const operation = await waitForOperation(team.server.baseUrl, team.token, started.body.id, 120_000);
    return { serviceId, operation };
  };

  beforeAll(async () => {
    smtp = await startSmtpSink();
    team = await startDockerTeam({ engine: { healthIntervalMs: INTERVAL_MS } });
    await seedMembers(team.server.app, team.teamId, 'docker-watch-password', ['owner']);
    await setNotificationMail(team.server.app.db.kysely, { host: '127.0.0.1', port: smtp.port, from: 'alerts@teaminfra.test' }, nowIso());
    serverId = await team.addServer('watched');
  }, 300_000);

  afterAll(async () => {
    await team?.server.close();
    await smtp?.close();
    for (const id of [serverId, crashServerId]) if (id) await removeEverythingOf(api, id);
    if (crashingImage) await api.json('DELETE', `/images/${encodeURIComponent(crashingImage)}`, { query: { force: 1 }, accept: [404, 409] });
    await api.close();
  }, 120_000);

  it('finds a service whose process is frozen unhealthy within 3 intervals, mails once, and sees it recover', async () => {
    const { serviceId, operation } = await startedService(serverId, 'Frozen');
    expect(operation.state).toBe('succeeded');
    const [container] = (await containersOfServer(api, serverId, 'service')).filter((each) => each.Labels['io.teaminfra.service-id'] === serviceId);
    expect(container).toBeDefined();
    await api.json('POST', `/containers/${container!.Id}/kill`, { query: { signal: 'SIGSTOP' } });
    try {
      // Three failed checks (each waits half an interval for an answer) take three passes, plus the one under way.
      const took = await waitForEvent('service.unhealthy', serviceId, 4 * INTERVAL_MS + 2_000);
      expect(took).toBeLessThanOrEqual(4 * INTERVAL_MS + 2_000);
      const [unhealthy] = await eventsAbout('service.unhealthy', serviceId);
      expect(unhealthy).toMatchObject({ checks_failed: 3, last_answer: 'no answer within 500 ms', service: { health: 'unhealthy', state: 'running' } });
      const shown = await send(team.server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, team.token);
      expect(shown.body).toMatchObject({ health: 'unhealthy', health_since: unhealthy.failing_since });
      // Still frozen for more passes: still one event, one email.
      await sleep(3 * INTERVAL_MS);
      expect(await eventsAbout('service.unhealthy', serviceId)).toHaveLength(1);
      expect(smtp.messages.filter((message) => message.data.includes('Subject: ERP service down: Frozen'))).toHaveLength(1);
    } finally {
      await api.json('POST', `/containers/${container!.Id}/kill`, { query: { signal: 'SIGCONT' } });
    }
    await waitForEvent('service.recovered', serviceId, 4 * INTERVAL_MS + 2_000);
    expect((await send(team.server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, team.token)).body.health).toBe('healthy');
    const deadline = Date.now() + 5_000;
    while (!smtp.messages.some((message) => message.data.includes('Subject: Resolved: ERP service down: Frozen')) && Date.now() < deadline) await sleep(100);
    expect(smtp.messages.filter((message) => message.data.includes('Frozen')).map((message) => /Subject: (.*)/.exec(message.data)?.[1]))
      .toEqual(['ERP service down: Frozen', 'Resolved: ERP service down: Frozen']);
  }, 300_000);

  it('reports a deploy that succeeds and then exits every 5 s as a crash loop, in the operation\'s result too', async () => {
    // The bundled application, ended by itself 5 s after it started (after its health check answered).
    const program = "setTimeout(() => process.exit(1), 5000); import('/app/dist/src/engine/erp-app/container-main.js');";
    crashingImage = await derivedImage(api, team.image, `teaminfra-test-crashing:${serverId.toLowerCase()}`,
      [`CMD ["/usr/local/bin/node","-e",${JSON.stringify(program)}]`]);
    crashServerId = await team.addServer('crashing', crashingImage);
    const { serviceId, operation } = await startedService(crashServerId, 'Crashing');
    expect(operation).toMatchObject({ state: 'succeeded', kind: 'start' });
    // Three restarts take about 16 s (5 s each, and the engine's growing delay between them).
    await waitForEvent('service.crash_loop', serviceId, 60_000);
    const [crashLoop] = await eventsAbout('service.crash_loop', serviceId);
    expect(crashLoop).toMatchObject({ restarts: 3, window_minutes: 5, operation_id: operation.id });
    const seen = await send(team.server.baseUrl, 'GET', `/api/operations/${operation.id}`, team.token);
    expect(seen.body).toMatchObject({
      state: 'succeeded', result: { crash_loop: expect.stringContaining('The engine restarted ERP service "Crashing" 3 times within 5 minutes') },
    });
    // Once per incident: it goes on restarting, and no second event comes.
    await sleep(8_000);
    expect(await eventsAbout('service.crash_loop', serviceId)).toHaveLength(1);
    expect(smtp.messages.filter((message) => message.data.includes('Subject: ERP service crash loop: Crashing'))).toHaveLength(1);
    await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, team.token);
  }, 300_000);

  it.runIf(secondEngineStartable)('makes a server whose engine stops unreachable, then recovered when it is back', async () => {
    let second: SecondEngine | undefined;
    try {
      second = await startSecondEngine();
      const db = team.server.app.db.kysely;
      const remote = await insertServer(db, { teamId: team.teamId, name: 'second engine' });
      await db.insertInto('docker_servers').values({ server_id: remote, docker_host: second.host, image: null, created_at: nowIso(), memory_mb: null, cpu_millicores: null }).execute();
      await sleep(2 * INTERVAL_MS);
      expect((await send(team.server.baseUrl, 'GET', `/api/servers/${remote}`, team.token)).body).toMatchObject({ reachable: true });
      await second.stopDaemon();
      await waitForEvent('server.unreachable', remote, 4 * INTERVAL_MS + 5_000);
      const [unreachable] = await eventsAbout('server.unreachable', remote);
      expect(unreachable).toMatchObject({ failed_pings: 3, server: { id: remote, reachable: false } });
      expect(unreachable.error).toContain(second.host.replace('unix://', ''));
      expect((await send(team.server.baseUrl, 'GET', `/api/servers/${remote}`, team.token)).body).toMatchObject({ reachable: false });
      await sleep(2 * INTERVAL_MS);
      expect(await eventsAbout('server.unreachable', remote)).toHaveLength(1);
      await second.startDaemon();
      await waitForEvent('server.recovered', remote, 4 * INTERVAL_MS + 5_000);
      expect((await send(team.server.baseUrl, 'GET', `/api/servers/${remote}`, team.token)).body).toMatchObject({ reachable: true });
      // The emails go out after their events, on the sender's own pace: read once both are in, or at the deadline.
      const subjects = () => smtp.messages.map((message) => /Subject: (.*)/.exec(message.data)?.[1]).filter((subject) => subject?.includes('second engine'));
      for (const deadline = Date.now() + 30_000; subjects().length < 2 && Date.now() < deadline;) await sleep(100);
      await sleep(500);
      expect(subjects()).toEqual(['Server unreachable: second engine', 'Resolved: Server unreachable: second engine']);
      await db.deleteFrom('docker_servers').where('server_id', '=', remote).execute();
      await db.updateTable('servers').set({ deleted_at: nowIso() }).where('id', '=', remote).execute();
    } finally {
      await second?.stop();
    }
  }, 300_000);
});
