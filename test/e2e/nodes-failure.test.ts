// Node failure with two `teaminfra serve` nodes on one PostgreSQL: node B is killed (SIGKILL) in
// the middle of an operation on a server it hosts. After B's lease expires, node A ends the
// operation as failed with a reason naming B (it cannot run B's processes); B, started again,
// reconciles its service with what really runs: one process, adopted, nothing run twice. An
// operation queued for B while it is down waits for B, and runs once it is back.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTransitions } from '../../src/db/repositories/operations.js';
import { processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { LEASE_MS, twoNodes, type TwoNodes } from './support/two-nodes.js';

describe.skipIf(process.platform !== 'linux')('a node killed in the middle of an operation', () => {
  let nodes: TwoNodes;
  let token: string;
  let serviceId: string;

  beforeAll(async () => {
    nodes = await twoNodes('node_failure');
    const teamId = (await nodes.admin(['create-team', '--name', 'Failure'])).id;
    token = (await nodes.admin(['create-token', '--team', teamId, '--name', 'ops', '--full-access'])).token;
    const serverId = (await nodes.admin(['create-server', '--team', teamId, '--name', 'on B'])).id;
    await nodes.db.kysely.updateTable('servers').set({ node: 'B' }).where('id', '=', serverId).execute();
    serviceId = (await nodes.admin(['create-service', '--team', teamId, '--server', serverId, '--name', 'Shop'])).id;
    await Promise.all([nodes.start('A'), nodes.start('B')]);
  });
  afterAll(async () => { await nodes?.close(); });

  const operationState = (operationId: string) => nodes.db.kysely.selectFrom('operations as o')
    .innerJoin('erp_services as s', 's.id', 'o.service_id').select(['o.state', 's.pid'])
    .where('o.id', '=', operationId).executeTakeFirstOrThrow();
  const serveOf = (node: 'A' | 'B') => nodes.serves[node]?.child.pid;

  it('fails B\'s operation after its lease expires, naming B, and B adopts the service when back, with no duplicate', async () => {
    const accepted = await send(nodes.url('A'), 'POST', `/api/service-erp/${serviceId}/start`, token);
    expect(accepted.status).toBe(202);
    const operationId = accepted.body.id as string;
    // Killed once B has taken the operation and spawned the service's process.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const row = await operationState(operationId);
      if (row.state === 'running' && row.pid !== null) break;
      if (row.state !== 'queued' && row.state !== 'running') throw new Error(`the start ended (${row.state}) before B could be killed`);
      if (Date.now() > deadline) throw new Error('B never took the operation');
      await sleep(2);
    }
    const killedAt = Date.now();
    expect(await nodes.serves.B?.stop('SIGKILL')).toBeNull();
    delete nodes.serves.B;
    expect((await operationState(operationId)).state).toBe('running');

    const ended = await waitForOperation(nodes.url('A'), token, operationId, 20_000);
    expect(Date.now() - killedAt).toBeGreaterThan(LEASE_MS / 2);
    expect(ended.state).toBe('failed');
    expect(ended.reason).toMatch(/^Node "B", which hosts this server and was running the operation, stopped answering \(its lease expired at /);
    const transitions = await listTransitions(nodes.db.kysely, operationId);
    expect(transitions.map((row) => row.state)).toEqual(['queued', 'running', 'failed']);
    // A ran nothing of B's: the one process of the service is the one B started, from B's directory.
    const [servicePid] = processesMatching(serviceId);
    expect(processesMatching(serviceId)).toHaveLength(1);
    expect(processesMatching(nodes.dataDirs.B)).toEqual([servicePid]);
    expect(processesMatching(nodes.dataDirs.A)).toEqual([serveOf('A')]);
    // While B is away, the service shows the state it was left in.
    expect((await send(nodes.url('A'), 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('starting');

    await nodes.start('B');
    const service = (await send(nodes.url('A'), 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(service.state).toBe('running');
    expect(processesMatching(serviceId)).toEqual([servicePid]);
    expect((await fetch(service.url)).status).toBe(200);
    // The failed operation stays failed: nobody ran it again.
    expect((await listTransitions(nodes.db.kysely, operationId)).map((row) => row.state)).toEqual(['queued', 'running', 'failed']);
    const operations = await nodes.db.kysely.selectFrom('operations').select('id').where('service_id', '=', serviceId).execute();
    expect(operations).toHaveLength(1);
  });

  it('keeps an operation queued for B while B is down, and B runs it once when it is back', async () => {
    expect(await nodes.serves.B?.stop('SIGKILL')).toBeNull();
    delete nodes.serves.B;
    const accepted = await send(nodes.url('A'), 'POST', `/api/service-erp/${serviceId}/stop`, token);
    expect(accepted.status).toBe(202);
    await sleep(LEASE_MS + 500);
    expect((await send(nodes.url('A'), 'GET', `/api/operations/${accepted.body.id}`, token)).body.state).toBe('queued');
    expect(processesMatching(serviceId)).toHaveLength(1);

    await nodes.start('B');
    expect(await waitForOperation(nodes.url('A'), token, accepted.body.id)).toMatchObject({ state: 'succeeded' });
    expect((await listTransitions(nodes.db.kysely, accepted.body.id)).map((row) => row.state)).toEqual(['queued', 'running', 'succeeded']);
    expect(processesMatching(serviceId)).toEqual([]);
    expect((await send(nodes.url('B'), 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('stopped');
  });
});
