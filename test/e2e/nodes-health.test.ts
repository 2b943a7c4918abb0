// Two `teaminfra serve` nodes on one PostgreSQL, both watching health every 0.5 s: the services'
// health paths (listeners of the test) are asked once per interval, not once per node; a service
// that stops answering makes one service.unhealthy event and one email, whichever node saw it;
// and when the node that watches stops, the other takes the watch over and sees it recover, once.
import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../src/db/ids.js';
import { insertService } from '../../src/db/repositories/services.js';
import { changeServiceState } from '../../src/engine/state-changes.js';
import { inWriteTransaction } from '../../src/engine/write-transaction.js';
import { startSmtpSink, type SmtpSink } from '../engine/support/smtp-sink.js';
import { twoNodes, type NodeName, type TwoNodes } from './support/two-nodes.js';

const INTERVAL_S = 0.5;
const SERVICES = 5;

interface Listener { port: number; status: number; checks: number[]; server: Server }

async function startListener(): Promise<Listener> {
  const listener = { port: 0, status: 200, checks: [] as number[] } as Listener;
  listener.server = createServer((_request, response) => {
    listener.checks.push(Date.now());
    response.writeHead(listener.status).end();
  });
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
  listener.port = (listener.server.address() as { port: number }).port;
  return listener;
}

describe.skipIf(process.platform !== 'linux')('health watched by two serve nodes sharing one PostgreSQL', () => {
  let nodes: TwoNodes;
  let smtp: SmtpSink;
  let teamId: string;
  const services: { id: string; listener: Listener }[] = [];

  const eventCount = async (type: string, serviceId: string) => (await nodes.db.kysely.selectFrom('events').select('payload')
    .where('team_id', '=', teamId).where('type', '=', type).execute())
    .filter((row) => JSON.parse(row.payload).data.service.id === serviceId).length;

  const waitFor = async (what: string, done: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await sleep(100);
    }
  };

  beforeAll(async () => {
    smtp = await startSmtpSink();
    nodes = await twoNodes('health');
    teamId = (await nodes.admin(['create-team', '--name', 'Watched twice'])).id;
    const serverId = (await nodes.admin(['create-server', '--team', teamId, '--name', 'local'])).id;
    await nodes.admin(['add-member', '--team', teamId, '--email', 'owner@example.com', '--role', 'owner']);
    await nodes.admin(['set-notification-mail', '--relay', `smtp://127.0.0.1:${smtp.port}`]);
    const db = nodes.db.kysely;
    for (let i = 0; i < SERVICES; i++) {
      const listener = await startListener();
      const id = await insertService(db, { teamId, serverId, name: `ERP ${i}` });
      await db.updateTable('erp_services').set({ port: listener.port }).where('id', '=', id).execute();
      await inWriteTransaction(db, (trx) => changeServiceState(trx, id, { state: 'running' }, { kind: 'start', operationId: null }, nowIso()));
      services.push({ id, listener });
    }
    const env = { TEAMINFRA_HEALTH_INTERVAL_S: String(INTERVAL_S) };
    // Reconciliation would find no process of these services (the listeners are the test's) and fail them.
    await db.updateTable('servers').set({ node: 'nobody' }).where('id', '=', serverId).execute();
    await Promise.all([nodes.start('A', env), nodes.start('B', env)]);
  }, 120_000);

  afterAll(async () => {
    await nodes?.close();
    await smtp?.close();
    for (const { listener } of services) listener.server.close();
  });

  it('asks each health path once per interval, not once per node', async () => {
    const from = Date.now() + 1_000;
    await sleep(6_000);
    const to = Date.now() - 1_000;
    const intervals = (to - from) / (INTERVAL_S * 1000);
    for (const { listener } of services) {
      const checks = listener.checks.filter((at) => at >= from && at < to).length;
      // One node watching: about one check an interval; two would make about two.
      expect(checks).toBeGreaterThanOrEqual(Math.floor(intervals * 0.6));
      expect(checks).toBeLessThanOrEqual(Math.ceil(intervals) + 1);
    }
  }, 30_000);

  it('sends one event and one email for a service that stops answering, and the other node sees it recover once the watching node stops', async () => {
    const [{ id, listener }] = services as [{ id: string; listener: Listener }];
    listener.status = 503;
    await waitFor('service.unhealthy', async () => (await eventCount('service.unhealthy', id)) > 0, 10_000);
    await sleep(3_000);
    expect(await eventCount('service.unhealthy', id)).toBe(1);
    expect(smtp.messages.filter((message) => message.data.includes('Subject: ERP service down: ERP 0'))).toHaveLength(1);

    // The node holding the watch stops; the other takes it over once the lease has expired.
    const lease = await nodes.db.kysely.selectFrom('maintenance_leases').select('lease_owner').where('name', '=', 'health-watch').executeTakeFirstOrThrow();
    const watching = (['A', 'B'] as NodeName[]).find((node) => lease.lease_owner.split('/')[1] === String(nodes.serves[node]?.child.pid));
    expect(watching).toBeDefined();
    await nodes.serves[watching!]!.stop('SIGKILL');
    listener.status = 200;
    await waitFor('service.recovered', async () => (await eventCount('service.recovered', id)) > 0, 30_000);
    await sleep(2_000);
    expect(await eventCount('service.recovered', id)).toBe(1);
    expect(await eventCount('service.unhealthy', id)).toBe(1);
    const other = await nodes.db.kysely.selectFrom('maintenance_leases').select('lease_owner').where('name', '=', 'health-watch').executeTakeFirstOrThrow();
    expect(other.lease_owner).not.toBe(lease.lease_owner);
    await waitFor('the end email', async () => smtp.messages.some((message) => message.data.includes('Subject: Resolved: ERP service down: ERP 0')), 10_000);
    expect(smtp.messages.filter((message) => message.data.includes('ERP 0'))).toHaveLength(2);
  }, 90_000);
});
