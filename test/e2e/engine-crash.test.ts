// Crash safety of the engine, with the real compiled command: `teaminfra serve` is killed with
// SIGKILL in the middle of an operation and started again on the same data. The operation
// must end (succeeded, or failed with a reason), and the service must run exactly as often as
// the database says: once if running, never twice, and no orphan when it is not.
import { readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../src/db/connect.js';
import { seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { fetchText, killProcessesMatching, processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';

describe.skipIf(process.platform !== 'linux')('teaminfra serve killed in the middle of an operation', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let db: SqliteDb;
  let token: string;
  let serviceId: string;

  beforeAll(async () => {
    ({ serviceId, token } = await seedThroughCli(dataDir, { team: 'Crash team', service: 'Crash ERP' }));
    db = openDatabase(dataDir);
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Sends the action, then kills serve with SIGKILL as soon as a worker has taken the operation
   * ('taken'), or once it has also spawned the service's new process ('spawned').
   */
  async function killDuring(action: 'start' | 'stop' | 'redeploy', moment: 'taken' | 'spawned' = 'taken'): Promise<string> {
    const progress = db.sqlite.prepare('SELECT o.state, s.pid FROM operations o JOIN erp_services s ON s.id = o.service_id WHERE o.id = ?');
    const pidBefore = (db.sqlite.prepare('SELECT pid FROM erp_services WHERE id = ?').get(serviceId) as { pid: number | null }).pid;
    const accepted = await send((serve as ServeProcess).baseUrl, 'POST', `/api/service-erp/${serviceId}/${action}`, token);
    expect(accepted.status).toBe(202);
    const reached = () => {
      const row = progress.get(accepted.body.id) as { state: string; pid: number | null };
      return row.state !== 'queued' && (moment === 'taken' || (row.pid !== null && row.pid !== pidBefore));
    };
    // Each look is taken with serve frozen (SIGSTOP), and serve is killed while still frozen: a
    // look that sees the operation running and the kill then land on the same moment of serve,
    // however long this process is kept from running in between (a loaded machine once let a
    // stop finish between the two).
    const pid = (serve as ServeProcess).child.pid as number;
    const deadline = Date.now() + 5000;
    for (;;) {
      await freeze(pid);
      if (reached() || Date.now() > deadline) break;
      process.kill(pid, 'SIGCONT');
      await sleep(1);
    }
    expect(await serve?.stop('SIGKILL')).toBeNull();
    // The point of the test: the operation was in the middle of running when its worker died.
    expect((progress.get(accepted.body.id) as { state: string }).state).toBe('running');
    return accepted.body.id as string;
  }

  /** Stops `pid` with SIGSTOP and waits until the kernel shows it stopped (state T in /proc). */
  async function freeze(pid: number): Promise<void> {
    process.kill(pid, 'SIGSTOP');
    const until = Date.now() + 2000;
    while (!isStopped(pid)) {
      if (Date.now() > until) throw new Error(`serve (pid ${pid}) did not stop within 2 s of SIGSTOP`);
      await sleep(1);
    }
  }

  /** After a restart: the operation ended, and what runs is exactly what the service's state says. */
  async function expectRecovered(operationId: string, expectedRevision?: number) {
    serve = await startServe(dataDir);
    const ended = await waitForOperation(serve.baseUrl, token, operationId);
    if (ended.state === 'failed') expect(ended.reason).toMatch(/\w{10,}/);
    const transitions = db.sqlite.prepare('SELECT state, reason FROM operation_transitions WHERE operation_id = ? ORDER BY id')
      .all(operationId) as { state: string; reason: string | null }[];
    expect(transitions.some((row) => row.state === 'running' && row.reason?.startsWith('Resumed'))).toBe(true);

    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    if (service.state === 'running') {
      expect(processesMatching(serviceId)).toHaveLength(1);
      const home = await fetchText(service.url);
      expect(home.status).toBe(200);
      if (expectedRevision !== undefined) expect(home.text).toContain(`data-revision="${expectedRevision}"`);
    } else {
      expect(processesMatching(serviceId)).toHaveLength(0);
    }
    return { operation: ended, service };
  }

  it('finishes a start that was interrupted, with one process', async () => {
    serve = await startServe(dataDir);
    const operationId = await killDuring('start');
    const { operation, service } = await expectRecovered(operationId);
    expect(operation.state).toBe('succeeded');
    expect(service.state).toBe('running');
  });

  it('finishes a redeploy interrupted after spawning its new process, serving the new revision once', async () => {
    const operationId = await killDuring('redeploy', 'spawned');
    const { operation, service } = await expectRecovered(operationId, 2);
    expect(operation.state).toBe('succeeded');
    expect(service).toMatchObject({ state: 'running', revision: 2 });
  });

  it('adopts a running service after serve was killed with no operation in flight, never starting a second copy', async () => {
    const [before] = processesMatching(serviceId);
    expect(before).toBeDefined();
    await serve?.stop('SIGKILL');
    serve = await startServe(dataDir);
    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(service.state).toBe('running');
    expect(processesMatching(serviceId)).toEqual([before]);
    const started = await send(serve.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token);
    expect((await waitForOperation(serve.baseUrl, token, started.body.id)).state).toBe('succeeded');
    expect(processesMatching(serviceId)).toEqual([before]);
  });

  it('keeps services running across a graceful stop of serve (detach) and adopts them', async () => {
    const [before] = processesMatching(serviceId);
    expect(await serve?.stop('SIGTERM')).toBe(0);
    expect(processesMatching(serviceId)).toEqual([before]);
    serve = await startServe(dataDir);
    expect((await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
    expect(processesMatching(serviceId)).toEqual([before]);
  });

  it('finishes a stop that was interrupted, leaving no orphan process', async () => {
    const operationId = await killDuring('stop');
    const { operation, service } = await expectRecovered(operationId);
    expect(operation.state).toBe('succeeded');
    expect(service.state).toBe('stopped');
    expect(processesMatching(serviceId)).toHaveLength(0);
  });

  it('finishes a start interrupted after spawning the process, adopting it rather than starting a second', async () => {
    const operationId = await killDuring('start', 'spawned');
    const { operation, service } = await expectRecovered(operationId);
    expect(operation.state).toBe('succeeded');
    expect(service.state).toBe('running');
  });

  it('marks a running service failed when its process was killed while serve was down', async () => {
    await serve?.stop('SIGKILL');
    for (const pid of processesMatching(serviceId)) process.kill(pid, 'SIGKILL');
    await sleep(50);
    serve = await startServe(dataDir);
    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(service.state).toBe('failed');
    const reason = db.sqlite.prepare('SELECT state_reason FROM erp_services WHERE id = ?').get(serviceId) as { state_reason: string };
    expect(reason.state_reason).toMatch(/no longer running/);
    await serve.stop('SIGTERM');
    serve = undefined;
    expect(processesMatching(dataDir)).toHaveLength(0);
  });
});

/** Whether the process is stopped: the state letter after the command name in /proc/<pid>/stat. */
function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat[stat.lastIndexOf(')') + 2] === 'T';
}
