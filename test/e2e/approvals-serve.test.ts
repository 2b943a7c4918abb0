// Approval before an action, through `teaminfra serve` as a real process: a restore asked by a
// token that needs approval runs nothing until another token approves it; denied, or left to
// expire (the serve process's own sweeper), it fails with the reason and the data is untouched.
// Then serve is killed (SIGKILL) while a stop awaits approval: after the restart, and after a
// sweep, the service still runs; approved, the stop is carried out.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteDb } from '../../src/db/connect.js';
import { admin, seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { act, processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { countProducts, deleteProducts } from '../engine/support/service-data.js';
import { leaveNothingBehind, serveWithBackup } from './support/served-backup.js';

describe.skipIf(process.platform !== 'linux')('approval before an action, through teaminfra serve', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess;
  let db: SqliteDb;
  let ops: string;
  let agent: { id: string; token: string };
  let approver: string;
  let teamId: string;
  let serviceId: string;
  let database: string;
  let backupId: string;
  let productsInBackup: number;

  beforeAll(async () => {
    const seeded = await seedThroughCli(dataDir, { team: 'Approvals', service: 'Shop ERP' });
    const { serverId } = seeded;
    ({ teamId, serviceId, token: ops } = seeded);
    agent = await admin(dataDir, ['create-token', '--team', teamId, '--name', 'coding agent',
      '--permissions', 'services:operate,backups:restore', '--needs-approval', 'restore_backup,stop_erp_service']) as { id: string; token: string };
    approver = (await admin(dataDir, ['create-token', '--team', teamId, '--name', 'on-call',
      '--permissions', 'decisions:answer'])).token as string;
    ({ serve, db, database, backupId, productsInBackup } = await serveWithBackup(dataDir, { serverId, serviceId }, ops));
  }, 60_000);
  afterAll(() => leaveNothingBehind(dataDir, serve, db));

  /** The agent asks for a restore; it answers 202 with the operation held and its decision. */
  async function heldRestore(): Promise<{ id: string; decision_id: string }> {
    const held = await send(serve.baseUrl, 'POST', `/api/backups/${backupId}/restore`, agent.token);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ kind: 'restore', state: 'awaiting_approval', service_id: serviceId, requested_channel: 'api' });
    expect(held.body.decision_id).toMatch(/^dec_/);
    return held.body;
  }

  const operation = async (id: string) => (await send(serve.baseUrl, 'GET', `/api/operations/${id}`, agent.token)).body;
  const backupsOfService = async () => (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}/backups`, ops)).body.data.length;

  it('holds a restore by a token that needs approval, and restores once another token approves', async () => {
    deleteProducts(database);
    const held = await heldRestore();
    const decision = (await send(serve.baseUrl, 'GET', `/api/decisions/${held.decision_id}`, approver)).body;
    expect(decision).toMatchObject({ state: 'pending', options: ['approve', 'deny'], operation_id: held.id, service_id: serviceId });
    expect(decision.question).toContain(`backup ${backupId}`);

    // Nothing runs while it waits (the worker polls many times a second), and the asker cannot approve.
    await sleep(1500);
    expect((await operation(held.id)).state).toBe('awaiting_approval');
    expect(countProducts(database)).toBe(0);
    const own = await send(serve.baseUrl, 'POST', `/api/decisions/${held.decision_id}/answer`, agent.token, { answer: 'approve' });
    expect(own.status).toBe(403);

    expect((await send(serve.baseUrl, 'POST', `/api/decisions/${held.decision_id}/answer`, approver, { answer: 'approve' })).status).toBe(200);
    expect(await waitForOperation(serve.baseUrl, agent.token, held.id)).toMatchObject({ state: 'succeeded', reason: null, decision_id: held.decision_id });
    expect(countProducts(database)).toBe(productsInBackup);
  }, 60_000);

  it('fails a denied restore with the reason, and changes nothing', async () => {
    deleteProducts(database);
    const backupsBefore = await backupsOfService();
    const held = await heldRestore();
    expect((await send(serve.baseUrl, 'POST', `/api/decisions/${held.decision_id}/answer`, approver, { answer: 'deny' })).status).toBe(200);
    expect(await waitForOperation(serve.baseUrl, agent.token, held.id)).toMatchObject({
      state: 'failed', reason: `Not approved: denied in decision ${held.decision_id}.`,
    });
    expect(countProducts(database)).toBe(0);
    // Not even the safety backup a restore takes first.
    expect(await backupsOfService()).toBe(backupsBefore);
  }, 60_000);

  it('fails a restore whose approval expired once the sweeper of serve sees it, and changes nothing', async () => {
    deleteProducts(database);
    const backupsBefore = await backupsOfService();
    const held = await heldRestore();
    // The shortest approval time an operator can set is an hour: its end is moved, in the real file.
    db.sqlite.prepare('UPDATE decisions SET expires_at = ? WHERE id = ?').run(new Date(Date.now() - 1000).toISOString(), held.decision_id);
    const failed = await waitForOperation(serve.baseUrl, agent.token, held.id, 20_000);
    expect(failed.state).toBe('failed');
    expect(failed.reason).toMatch(new RegExp(`^Not approved: decision ${held.decision_id} expired at \\S+ without an answer\\.$`));
    expect((await send(serve.baseUrl, 'GET', `/api/decisions/${held.decision_id}`, approver)).body.state).toBe('expired');
    const late = await send(serve.baseUrl, 'POST', `/api/decisions/${held.decision_id}/answer`, approver, { answer: 'approve' });
    expect(late.status).toBe(409);
    expect(countProducts(database)).toBe(0);
    expect(await backupsOfService()).toBe(backupsBefore);
  }, 60_000);

  it('runs nothing without approval after serve is killed while a stop awaits it, and stops once approved', async () => {
    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).body;
    expect(service.state).toBe('running');
    const [pid] = processesMatching(serviceId);
    expect(pid).toBeDefined();
    const held = await send(serve.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, agent.token);
    expect(held.body).toMatchObject({ kind: 'stop', state: 'awaiting_approval' });
    // A question whose end passes while serve is down: its expiry after the restart shows a sweep ran.
    const marker = (await send(serve.baseUrl, 'POST', '/api/decisions', ops, { question: 'Still there after the crash?', expires_in_minutes: 1 })).body;

    expect(await serve.stop('SIGKILL')).toBeNull();
    db.sqlite.prepare('UPDATE decisions SET expires_at = ? WHERE id = ?').run(new Date(Date.now() - 1000).toISOString(), marker.id);
    serve = await startServe(dataDir);
    const deadline = Date.now() + 15_000;
    while ((await send(serve.baseUrl, 'GET', `/api/decisions/${marker.id}`, ops)).body.state !== 'expired') {
      if (Date.now() > deadline) throw new Error('no sweep expired the marker decision after the restart');
      await sleep(100);
    }
    // And the worker has had time to take anything queued.
    await sleep(1500);
    expect(await operation(held.body.id)).toMatchObject({ state: 'awaiting_approval', started_at: null });
    expect((await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).body.state).toBe('running');
    expect(processesMatching(serviceId)).toEqual([pid]);
    expect((await send(serve.baseUrl, 'GET', `/api/decisions/${held.body.decision_id}`, approver)).body.state).toBe('pending');

    expect((await send(serve.baseUrl, 'POST', `/api/decisions/${held.body.decision_id}/answer`, approver, { answer: 'approve' })).status).toBe(200);
    expect(await waitForOperation(serve.baseUrl, agent.token, held.body.id)).toMatchObject({ state: 'succeeded', decision_id: held.body.decision_id });
    expect((await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).body.state).toBe('stopped');
    expect(processesMatching(serviceId)).toEqual([]);
  }, 90_000);

  it('keeps the backup a held restore names through retention after a restart, and restores it once approved', async () => {
    const held = await heldRestore();
    const older = (await act(serve.baseUrl, ops, 'POST', `/api/service-erp/${serviceId}/backups`)).backup_id;
    const newest = (await act(serve.baseUrl, ops, 'POST', `/api/service-erp/${serviceId}/backups`)).backup_id;
    await admin(dataDir, ['set-backup-retention', '--team', teamId, '--keep-manual', '1']);
    deleteProducts(database);
    // Retention runs when serve starts: of the manual backups it keeps the newest, and the one
    // the held restore names; the one in between shows that it ran.
    expect(await serve.stop()).toBe(0);
    serve = await startServe(dataDir);
    const deadline = Date.now() + 15_000;
    while ((await send(serve.baseUrl, 'GET', `/api/backups/${older}`, ops)).status !== 404) {
      if (Date.now() > deadline) throw new Error('retention did not run after the restart');
      await sleep(100);
    }
    expect((await send(serve.baseUrl, 'GET', `/api/backups/${newest}`, ops)).status).toBe(200);
    expect((await send(serve.baseUrl, 'GET', `/api/backups/${backupId}`, ops)).status).toBe(200);

    expect((await send(serve.baseUrl, 'POST', `/api/decisions/${held.decision_id}/answer`, approver, { answer: 'approve' })).status).toBe(200);
    expect(await waitForOperation(serve.baseUrl, agent.token, held.id)).toMatchObject({ state: 'succeeded', reason: null });
    expect(countProducts(database)).toBe(productsInBackup);
  }, 90_000);
});
