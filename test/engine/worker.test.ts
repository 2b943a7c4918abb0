// The operations worker and its leases, on a real database: who may take an operation, when a
// dead worker's operation is taken over, and that an operation is never run twice at once.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, defaultConfig, type App } from '../../src/app.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { findOperation, insertOperation, listTransitions, type OperationKind } from '../../src/db/repositories/operations.js';
import { LOCAL_OWNER_PREFIX } from '../../src/engine/lease-owner.js';
import { MAX_ATTEMPTS } from '../../src/engine/perform.js';
import { seedTeam, tempDataDir, type SeededTeam } from '../support/fixtures.js';
import { killProcessesMatching, processesMatching } from './support/engine-http.js';

const FAST = { pollMs: 30, reconcileIntervalMs: 0, leaseMs: 2000 };

describe('OperationWorker', () => {
  const apps: App[] = [];
  const dataDir = tempDataDir();
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  function open(): App {
    const app = createApp({ ...defaultConfig(dataDir), engine: FAST });
    apps.push(app);
    return app;
  }

  /** A stop operation on a stopped service, already "running" under someone else's lease. */
  async function leasedOperation(app: App, team: SeededTeam, owner: string, expiresInMs: number, kind: OperationKind = 'stop') {
    const serviceId = team.serviceIds[1];
    const operation = await insertOperation(app.db.kysely, {
      teamId: team.teamId, kind, serviceId, serverId: team.serverIds[1], parameters: {}, tokenId: null, channel: 'api',
      idempotencyKey: null, fingerprint: null,
    }, newId('op'), nowIso());
    await app.db.kysely.updateTable('operations').set({
      state: 'running', lease_owner: owner, lease_expires_at: new Date(Date.now() + expiresInMs).toISOString(), started_at: nowIso(),
    }).where('id', '=', operation.id).execute();
    return operation.id;
  }

  async function waitForEnd(app: App, operationId: string, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const operation = await findOperation(app.db.kysely, operationId);
      if (operation?.state === 'succeeded' || operation?.state === 'failed') return operation;
      if (Date.now() > deadline) throw new Error(`operation still ${operation?.state}`);
      await sleep(20);
    }
  }

  it('leaves an operation alone while another host holds a valid lease, and takes it over when the lease expires', async () => {
    const app = open();
    const team = await seedTeam(app);
    const operationId = await leasedOperation(app, team, 'another-host/4242/cafe', 60_000);
    await app.engine.start();
    await sleep(200);
    expect(await findOperation(app.db.kysely, operationId)).toMatchObject({ state: 'running', lease_owner: 'another-host/4242/cafe' });

    await app.db.kysely.updateTable('operations').set({ lease_expires_at: new Date(Date.now() - 1).toISOString() })
      .where('id', '=', operationId).execute();
    expect(await waitForEnd(app, operationId)).toMatchObject({ state: 'succeeded', lease_owner: null });
    const transitions = await listTransitions(app.db.kysely, operationId);
    expect(transitions.map((row) => row.state)).toEqual(['running', 'succeeded']);
    expect(transitions[0]?.reason).toBe('Resumed: the worker running it (another-host/4242/cafe) stopped before it finished.');
  });

  it('takes over at once, without waiting for the lease, an operation whose worker on this host has died', async () => {
    const app = open();
    const team = await seedTeam(app);
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.once('exit', resolve));
    const operationId = await leasedOperation(app, team, `${LOCAL_OWNER_PREFIX}${dead.pid}/beef`, 60_000);
    await app.engine.start();
    expect(await waitForEnd(app, operationId, 2000)).toMatchObject({ state: 'succeeded' });
  });

  it('fails an operation interrupted too many times, with the reason, instead of running it again', async () => {
    const app = open();
    const team = await seedTeam(app);
    const operationId = await leasedOperation(app, team, 'another-host/1/dead', -1, 'start');
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      await app.db.kysely.insertInto('operation_transitions').values({
        id: newId('opt'), operation_id: operationId, state: 'running', reason: null, at: nowIso(), token_id: null, channel: 'api',
      }).execute();
    }
    await app.engine.start();
    const ended = await waitForEnd(app, operationId);
    expect(ended.state).toBe('failed');
    expect(ended.reason).toMatch(/^The operation was interrupted 3 times .* Run it again\.$/);
    expect(processesMatching(team.serviceIds[1])).toEqual([]);
  });

  it('stops, at start, a leftover process of a service recorded as stopped', async () => {
    const app = open();
    const team = await seedTeam(app);
    const serviceId = team.serviceIds[0];
    const spec = { id: serviceId, name: 'ERP A', revision: 1, port: null, pid: null, outgoingSmtp: null, parentId: null, server: { id: team.serverIds[0], rootDir: null, docker: null } };
    const orphan = await app.engine.driver.start(spec, { portAssigned: async () => undefined, spawned: async () => undefined });
    expect(processesMatching(serviceId)).toEqual([orphan.pid]);
    await app.engine.start();
    expect(processesMatching(serviceId)).toEqual([]);
  });
});
