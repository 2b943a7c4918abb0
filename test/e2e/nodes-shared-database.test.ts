// Two `teaminfra serve` processes ("A" and "B") on different ports against one PostgreSQL:
// either node answers for everything, an operation runs on the node hosting its server
// whichever node was asked, a webhook event is delivered once although both nodes deliver,
// and a token revoked or changed is refused or limited on the very next request to any node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent } from '../../src/db/repositories/events.js';
import { updateTokenAccess } from '../../src/db/repositories/token-admin.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { twoNodes, type TwoNodes } from './support/two-nodes.js';

describe.skipIf(process.platform !== 'linux')('two serve nodes sharing one PostgreSQL', () => {
  let nodes: TwoNodes;
  let receiver: Receiver | undefined;
  let teamId: string;
  let token: string;
  /** A server hosted by B. */
  let serverOfB: string;
  let serviceId: string;

  beforeAll(async () => {
    nodes = await twoNodes('two_nodes');
    teamId = (await nodes.admin(['create-team', '--name', 'Two nodes'])).id;
    token = (await nodes.admin(['create-token', '--team', teamId, '--name', 'ops', '--full-access'])).token;
    serverOfB = (await nodes.admin(['create-server', '--team', teamId, '--name', 'on B'])).id;
    await nodes.db.kysely.updateTable('servers').set({ node: 'B' }).where('id', '=', serverOfB).execute();
    await Promise.all([nodes.start('A'), nodes.start('B')]);
  });
  afterAll(async () => {
    await receiver?.close();
    await nodes?.close();
  });

  it('reads through node B an ERP service created through node A', async () => {
    const created = await send(nodes.url('A'), 'POST', '/api/service-erp', token, { server_id: serverOfB, name: 'Shop' });
    expect(created.status).toBe(202);
    serviceId = created.body.service_id;
    const seenByB = await send(nodes.url('B'), 'GET', `/api/service-erp/${serviceId}`, token);
    expect(seenByB.status).toBe(200);
    expect(seenByB.body).toMatchObject({ id: serviceId, name: 'Shop', server_id: serverOfB });
    const operation = await waitForOperation(nodes.url('B'), token, created.body.id);
    expect(operation).toMatchObject({ state: 'succeeded', kind: 'create' });
    const listedByA = await send(nodes.url('A'), 'GET', '/api/service-erp', token);
    expect(listedByA.body.data.map((service: { id: string }) => service.id)).toEqual([serviceId]);
  });

  it('runs on node B a start requested through node A for a service of a server B hosts', async () => {
    const accepted = await send(nodes.url('A'), 'POST', `/api/service-erp/${serviceId}/start`, token);
    expect(accepted.status).toBe(202);
    expect(await waitForOperation(nodes.url('A'), token, accepted.body.id)).toMatchObject({ state: 'succeeded' });
    // The service's one process runs from B's data directory; nothing but serve runs from A's.
    const [servicePid] = processesMatching(serviceId);
    expect(processesMatching(serviceId)).toHaveLength(1);
    expect(processesMatching(nodes.dataDirs.B)).toContain(servicePid);
    expect(processesMatching(nodes.dataDirs.A)).toEqual([nodes.serves.A?.child.pid]);
    const service = await send(nodes.url('A'), 'GET', `/api/service-erp/${serviceId}`, token);
    expect(service.body.state).toBe('running');
    const home = await fetch(service.body.url);
    expect(home.status).toBe(200);
  });

  it('delivers each webhook event once, though both nodes run a delivery worker', async () => {
    receiver = await startReceiver();
    const hook = await nodes.admin(['create-webhook', '--team', teamId, '--url', receiver.url,
      '--events', 'decision.needed,service.stopped', '--allow-private']);
    const eventIds: string[] = [];
    for (let index = 0; index < 25; index += 1) {
      eventIds.push(await insertEvent(nodes.db.kysely, { teamId, type: 'decision.needed', data: { question: `Deploy #${index}?` } }));
    }
    // And a real change, made through A and run by B.
    const stopped = await send(nodes.url('A'), 'POST', `/api/service-erp/${serviceId}/stop`, token);
    expect(await waitForOperation(nodes.url('B'), token, stopped.body.id)).toMatchObject({ state: 'succeeded' });

    const received = await receiver.waitFor(26, 20_000);
    // Time for a second delivery, were there to be one.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ids = receiver.received.map((delivery) => delivery.headers['webhook-id'] as string);
    expect(ids).toHaveLength(26);
    expect(new Set(ids).size).toBe(26);
    expect(ids).toEqual(expect.arrayContaining(eventIds));
    const types = received.map((delivery) => verifyWebhook<{ type: string }>(hook.secret, delivery.headers as Record<string, string>, delivery.body).type);
    expect(types.filter((type) => type === 'service.stopped')).toHaveLength(1);
  });

  it('refuses on node B, on its very next request, a token just revoked in the shared database', async () => {
    const created = await nodes.admin(['create-token', '--team', teamId, '--name', 'soon revoked', '--full-access']);
    // Both nodes have just accepted it.
    expect((await send(nodes.url('B'), 'GET', '/api/token', created.token)).status).toBe(200);
    expect((await send(nodes.url('A'), 'GET', '/api/token', created.token)).status).toBe(200);
    await revokeToken(nodes.db.kysely, created.id);
    const refused = await send(nodes.url('B'), 'GET', '/api/service-erp', created.token);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_token');
    expect((await send(nodes.url('A'), 'GET', '/api/service-erp', created.token)).status).toBe(401);
  });

  it('applies an access change on node B\'s very next request', async () => {
    const created = await nodes.admin(['create-token', '--team', teamId, '--name', 'narrowed', '--full-access']);
    expect((await send(nodes.url('B'), 'GET', '/api/servers', created.token)).status).toBe(200);
    await updateTokenAccess(nodes.db.kysely, created.id, {
      name: 'narrowed', expiresOn: null, acceptedBy: 'both', fullAccess: false, permissions: ['services:read'], serviceIds: null, serverIds: null,
      needsApproval: [],
    });
    const refused = await send(nodes.url('B'), 'GET', '/api/servers', created.token);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('This API token does not have the servers:read scope.');
    expect((await send(nodes.url('B'), 'GET', '/api/service-erp', created.token)).status).toBe(200);
  });
});
