// Which node does what with the shared queue, on the engine of the current project: a node
// takes only operations of servers it hosts (and becomes the host of a server nobody hosts
// yet), fails another node's operation once that node's lease has expired (naming it), resumes
// its own, and reconciles only its own services; fails operations queued for B once B has not
// been seen for the node-gone bound. One app plays node "A"; rows play node "B".
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, defaultConfig, type App } from '../../src/app.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { insertPendingBackup } from '../../src/db/repositories/backups.js';
import { markNodeSeen } from '../../src/db/repositories/nodes.js';
import { findOperation, insertOperation, listTransitions, type OperationKind } from '../../src/db/repositories/operations.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import type { ServiceState } from '../../src/db/tables.js';
import { testEngine, testLocation, type TestLocation } from '../support/database.js';

const engine = testEngine();
const FAST = { node: 'A', pollMs: 30, reconcileIntervalMs: 0, leaseMs: 2000 };

describe(`nodes and the shared operations queue (${engine})`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function nodeA(overrides: { nodeGoneAfterMs?: number } = {}): Promise<{ app: App; teamId: string }> {
    const location: TestLocation = await testLocation(engine, 'nodes');
    cleanups.push(() => location.remove());
    const app = createApp({ ...defaultConfig(location.dataDir), database: location.database, engine: { ...FAST, ...overrides } });
    cleanups.push(() => app.close());
    await app.db.ready();
    const teamId = await insertTeam(app.db.kysely, { name: 'Nodes', plan: 'starter', timezone: 'UTC' });
    return { app, teamId };
  }

  async function serviceOn(app: App, teamId: string, node: string | null, state: ServiceState = 'stopped') {
    const serverId = await insertServer(app.db.kysely, { teamId, name: `on ${node ?? 'nobody'}`, node });
    const serviceId = await insertService(app.db.kysely, { teamId, serverId, name: 'ERP', state });
    return { serverId, serviceId };
  }

  async function queue(
    app: App, teamId: string, on: { serverId: string; serviceId: string }, kind: OperationKind = 'stop', parameters: object = {}, at = nowIso(),
  ) {
    return (await insertOperation(app.db.kysely, {
      teamId, kind, serviceId: on.serviceId, serverId: on.serverId, parameters, tokenId: null, channel: 'api',
      idempotencyKey: null, fingerprint: null,
    }, newId('op'), at)).id;
  }

  async function waitForEnd(app: App, operationId: string, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const operation = await findOperation(app.db.kysely, operationId);
      if (operation?.state === 'succeeded' || operation?.state === 'failed') return operation;
      if (Date.now() > deadline) throw new Error(`operation ${operationId} still ${operation?.state}`);
      await sleep(20);
    }
  }

  it('takes operations of servers it hosts, becomes the host of a server nobody hosts, and leaves B\'s queued', async () => {
    const { app, teamId } = await nodeA();
    const mine = await serviceOn(app, teamId, 'A');
    const nobodys = await serviceOn(app, teamId, null);
    const theirs = await serviceOn(app, teamId, 'B');
    const ids = { mine: await queue(app, teamId, mine), nobodys: await queue(app, teamId, nobodys), theirs: await queue(app, teamId, theirs) };
    await app.engine.start();
    expect(await waitForEnd(app, ids.mine)).toMatchObject({ state: 'succeeded' });
    expect(await waitForEnd(app, ids.nobodys)).toMatchObject({ state: 'succeeded' });
    await sleep(300);
    expect(await findOperation(app.db.kysely, ids.theirs)).toMatchObject({ state: 'queued', lease_owner: null });
    const hosts = await app.db.kysely.selectFrom('servers').select(['id', 'node']).orderBy('id').execute();
    expect(hosts).toEqual([
      { id: mine.serverId, node: 'A' }, { id: nobodys.serverId, node: 'A' }, { id: theirs.serverId, node: 'B' },
    ]);
  });

  it('fails B\'s running operation once B\'s lease has expired, naming B, and leaves the service to B', async () => {
    const { app, teamId } = await nodeA();
    const theirs = await serviceOn(app, teamId, 'B', 'stopping');
    const operationId = await queue(app, teamId, theirs);
    const expiresAt = new Date(Date.now() + 700).toISOString();
    await app.db.kysely.updateTable('operations')
      .set({ state: 'running', lease_owner: 'machine-b/4242/cafe', lease_expires_at: expiresAt, started_at: nowIso() })
      .where('id', '=', operationId).execute();
    await app.engine.start();
    await sleep(300);
    // B's lease still holds: B may be busy with it.
    expect(await findOperation(app.db.kysely, operationId)).toMatchObject({ state: 'running', lease_owner: 'machine-b/4242/cafe' });

    const ended = await waitForEnd(app, operationId);
    expect(ended.state).toBe('failed');
    expect(ended.reason).toBe(`Node "B", which hosts this server and was running the operation, stopped answering (its lease expired at ${expiresAt}). ` +
      'Its ERP services run on that node, so no other node can finish the operation; "B" checks what really runs when it is back. Try again then.');
    // A ended it without running it, and did not touch B's service.
    expect((await listTransitions(app.db.kysely, operationId)).map((row) => [row.state, row.reason])).toEqual([['failed', ended.reason]]);
    const service = await app.db.kysely.selectFrom('erp_services').select('state').where('id', '=', theirs.serviceId).executeTakeFirstOrThrow();
    expect(service.state).toBe('stopping');
    const events = await app.db.kysely.selectFrom('events').select('type').where('team_id', '=', teamId).execute();
    expect(events.map((row) => row.type)).toEqual(['operation.failed']);
  });

  it('resumes its own running operation whose lease expired, as the host of its server', async () => {
    const { app, teamId } = await nodeA();
    const mine = await serviceOn(app, teamId, 'A');
    const operationId = await queue(app, teamId, mine);
    await app.db.kysely.updateTable('operations')
      .set({ state: 'running', lease_owner: 'old-machine/4242/cafe', lease_expires_at: new Date(Date.now() - 1).toISOString(), started_at: nowIso() })
      .where('id', '=', operationId).execute();
    await app.engine.start();
    expect(await waitForEnd(app, operationId)).toMatchObject({ state: 'succeeded' });
    const transitions = await listTransitions(app.db.kysely, operationId);
    expect(transitions.map((row) => row.state)).toEqual(['running', 'succeeded']);
    expect(transitions[0]?.reason).toMatch(/^Resumed/);
  });

  it('reconciles only the services of servers it hosts', async () => {
    const { app, teamId } = await nodeA();
    // Both recorded as running, with no process on this machine.
    const mine = await serviceOn(app, teamId, 'A', 'running');
    const theirs = await serviceOn(app, teamId, 'B', 'running');
    await app.engine.start();
    const states = await app.db.kysely.selectFrom('erp_services').select(['id', 'state']).orderBy('id').execute();
    expect(states).toEqual([{ id: mine.serviceId, state: 'failed' }, { id: theirs.serviceId, state: 'running' }]);
  });

  it('fails B\'s queued operations once B has not been seen for the bound, naming B, and ends a queued backup\'s row', async () => {
    const { app, teamId } = await nodeA({ nodeGoneAfterMs: 1000 });
    const theirs = await serviceOn(app, teamId, 'B', 'stopping');
    const seenAt = nowIso();
    await markNodeSeen(app.db.kysely, 'B', seenAt);
    const stopId = await queue(app, teamId, theirs);
    const backupId = newId('bak');
    const backupOperationId = await queue(app, teamId, theirs, 'backup', { backup_id: backupId });
    await insertPendingBackup(app.db.kysely, { id: backupId, teamId, serviceId: theirs.serviceId, kind: 'manual', operationId: backupOperationId, at: nowIso() });
    await app.engine.start();
    await sleep(300);
    // B may only be restarting.
    expect(await findOperation(app.db.kysely, stopId)).toMatchObject({ state: 'queued' });

    const ended = await waitForEnd(app, stopId);
    expect(ended.state).toBe('failed');
    expect(ended.reason).toBe(`Node "B", which hosts this server, did not take the operation: it has not been seen since ${seenAt}, ` +
      'more than 1 second (TEAMINFRA_NODE_GONE_MS), so the operation was not run. Its ERP services run on that node, so no other node ' +
      'can run it; "B" checks what really runs when it is back. Try again then.');
    expect(Date.parse(ended.finished_at as string) - Date.parse(seenAt)).toBeGreaterThanOrEqual(1000);
    expect((await listTransitions(app.db.kysely, stopId)).map((row) => [row.state, row.reason])).toEqual([['failed', ended.reason]]);
    expect(await waitForEnd(app, backupOperationId)).toMatchObject({ state: 'failed', reason: ended.reason });
    const backup = await app.db.kysely.selectFrom('backups').select(['state', 'reason']).where('id', '=', backupId).executeTakeFirstOrThrow();
    expect(backup).toEqual({ state: 'failed', reason: ended.reason });
    // Nothing ran, and B's service is B's to reconcile when it is back.
    const service = await app.db.kysely.selectFrom('erp_services').select('state').where('id', '=', theirs.serviceId).executeTakeFirstOrThrow();
    expect(service.state).toBe('stopping');
    const events = await app.db.kysely.selectFrom('events').select('type').where('team_id', '=', teamId).orderBy('id').execute();
    expect(events.map((row) => row.type).sort()).toEqual(['backup.failed', 'operation.failed', 'operation.failed']);
  });

  it('leaves B\'s queued operation however long it waited while B is seen, and marks itself seen', async () => {
    const { app, teamId } = await nodeA({ nodeGoneAfterMs: 1000 });
    const theirs = await serviceOn(app, teamId, 'B');
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const operationId = await queue(app, teamId, theirs, 'stop', {}, anHourAgo);
    // B's engine marks itself seen every few hundred ms: busy, not gone.
    const beatingB = setInterval(() => void markNodeSeen(app.db.kysely, 'B', nowIso()), 100);
    try {
      await markNodeSeen(app.db.kysely, 'B', nowIso());
      await app.engine.start();
      await sleep(1500);
      expect(await findOperation(app.db.kysely, operationId)).toMatchObject({ state: 'queued' });
    } finally {
      clearInterval(beatingB);
    }
    const seen = await app.db.kysely.selectFrom('nodes').select(['name', 'last_seen_at']).where('name', '=', 'A').executeTakeFirstOrThrow();
    expect(Date.now() - Date.parse(seen.last_seen_at)).toBeLessThan(1000);
    // B falls silent: the operation ends once B has been unseen for the bound.
    expect(await waitForEnd(app, operationId)).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^Node "B", which hosts this server, did not take/) });
  });
});
