// Webhook delivery against a real receiving server on loopback: signed events, retries with the
// same webhook-id, 410, Retry-After, and private addresses refused when saved and when resolved.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent } from '../../src/db/repositories/events.js';
import { findWebhook, insertWebhook } from '../../src/db/repositories/webhooks.js';
import { webhookConfigFromEnv, type WebhookConfig } from '../../src/webhooks/config.js';
import { createWebhook } from '../../src/webhooks/create-webhook.js';
import { WebhookWorker } from '../../src/webhooks/delivery-worker.js';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { redeliver, sendTestEvent } from '../../src/webhooks/test-event.js';
import type { Lookup } from '../../src/webhooks/url-safety.js';
import { seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const config: WebhookConfig = { ...webhookConfigFromEnv({}), retryDelaysMs: [30, 30], pollMs: 20 };

describe('webhook delivery', () => {
  let server: TestServer;
  let team: SeededTeam;
  let receiver: Receiver;
  let worker: WebhookWorker;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
  });
  afterAll(async () => { await server.close(); });
  afterEach(async () => {
    await worker?.stop();
    await receiver?.close();
    await server.app.db.kysely.deleteFrom('webhooks').execute();
  });

  const deliveriesOf = (webhookId: string) =>
    server.app.db.kysely.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('id').execute();

  async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await worker.tick();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('delivers an event signed per Standard Webhooks, which the receiver verifies', async () => {
    receiver = await startReceiver();
    const hook = await createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: receiver.url, eventTypes: ['service.started'], allowPrivate: true });
    worker = new WebhookWorker(server.app.db.kysely, config, server.app.secrets);
    const eventId = await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.started', data: { service: { id: team.serviceIds[0] } } });
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.stopped', data: {} });
    worker.start();
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.headers['webhook-id']).toBe(eventId);
    expect(delivery?.headers['content-type']).toBe('application/json');
    const event = verifyWebhook(hook.secret, delivery!.headers as Record<string, string>, delivery!.body);
    expect(event).toMatchObject({ type: 'service.started', data: { service: { id: team.serviceIds[0] } } });
    await until(async () => (await deliveriesOf(hook.id))[0]?.state === 'delivered', 'delivered state');
    // Not subscribed to service.stopped: nothing else arrives.
    await worker.tick();
    expect(receiver.received).toHaveLength(1);
    const [row] = await deliveriesOf(hook.id);
    expect(row).toMatchObject({ state: 'delivered', attempts: 1, last_status: 200, last_response_excerpt: 'ok' });
  });

  it('retries a 500 with the same webhook-id, then succeeds', async () => {
    receiver = await startReceiver();
    receiver.script.push({ status: 500, body: 'boom' });
    const hook = await createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: receiver.url, eventTypes: '*', allowPrivate: true });
    worker = new WebhookWorker(server.app.db.kysely, config, server.app.secrets);
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'operation.failed', data: { reason: 'x' } });
    worker.start();
    const [first, second] = await receiver.waitFor(2);
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(Number(second?.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(first?.headers['webhook-timestamp']));
    await until(async () => (await deliveriesOf(hook.id))[0]?.state === 'delivered', 'delivered after retry');
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ attempts: 2, last_status: 200 });
  });

  it('disables the webhook when the endpoint answers 410 Gone', async () => {
    receiver = await startReceiver();
    receiver.script.push({ status: 410 });
    const hook = await createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: receiver.url, eventTypes: '*', allowPrivate: true });
    worker = new WebhookWorker(server.app.db.kysely, config, server.app.secrets);
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.failed', data: {} });
    await until(async () => (await findWebhook(server.app.db.kysely, team.teamId, hook.id))?.enabled === 0, 'disabled webhook');
    const stored = await findWebhook(server.app.db.kysely, team.teamId, hook.id);
    expect(stored?.disabled_reason).toContain('410 Gone');
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ state: 'failed', last_status: 410 });
    // Later events are not fanned out to a disabled webhook.
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.failed', data: {} });
    await worker.tick();
    expect(receiver.received).toHaveLength(1);
  });

  it('disables an endpoint that has been failing for longer than the limit, and says so', async () => {
    receiver = await startReceiver();
    receiver.script.push({ status: 500 });
    const hook = await createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: receiver.url, eventTypes: '*', allowPrivate: true });
    const fourDaysAgo = new Date(Date.now() - 4 * 86_400_000).toISOString();
    await server.app.db.kysely.updateTable('webhooks').set({ failing_since: fourDaysAgo }).where('id', '=', hook.id).execute();
    worker = new WebhookWorker(server.app.db.kysely, config, server.app.secrets);
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.failed', data: {} });
    await until(async () => (await findWebhook(server.app.db.kysely, team.teamId, hook.id))?.enabled === 0, 'disabled after days of failure');
    expect((await findWebhook(server.app.db.kysely, team.teamId, hook.id))?.disabled_reason)
      .toBe(`Deliveries have failed since ${fourDaysAgo.slice(0, 16).replace('T', ' ')} UTC, so the webhook was disabled. Fix the endpoint, then enable it again.`);
  });

  it('waits as long as Retry-After asks', async () => {
    receiver = await startReceiver();
    receiver.script.push({ status: 503, headers: { 'retry-after': '120' } });
    const hook = await createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: receiver.url, eventTypes: '*', allowPrivate: true });
    worker = new WebhookWorker(server.app.db.kysely, config, server.app.secrets);
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.failed', data: {} });
    await until(async () => (await deliveriesOf(hook.id))[0]?.attempts === 1, 'first attempt');
    const [row] = await deliveriesOf(hook.id);
    expect(row?.state).toBe('pending');
    expect(Date.parse(row!.next_attempt_at) - Date.now()).toBeGreaterThan(110_000);
  });

  it('refuses a private or loopback URL when the webhook is created', async () => {
    for (const url of ['https://127.0.0.1/hook', 'https://localhost/hook', 'https://[::1]/hook', 'https://169.254.169.254/']) {
      await expect(createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url, eventTypes: '*' }), url)
        .rejects.toThrow(/private, loopback or link-local/);
    }
    await expect(createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: 'http://hooks.example.com/', eventTypes: '*' }))
      .rejects.toThrow('must use https');
  });

  it('refuses at delivery a host name that now resolves to a private address', async () => {
    receiver = await startReceiver();
    // As if DNS changed after the webhook was saved (DNS rebinding): the name now points at loopback.
    const rebinding: Lookup = (_hostname, options, callback) =>
      (options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4));
    const hook = await insertWebhook(server.app.db.kysely, server.app.secrets, {
      teamId: team.teamId, url: `https://hooks.example.test:${receiver.port}/hook`, description: '', eventTypes: '*', allowPrivate: false,
    });
    worker = new WebhookWorker(server.app.db.kysely, { ...config, allowHttp: true }, server.app.secrets, rebinding);
    await insertEvent(server.app.db.kysely, { teamId: team.teamId, type: 'service.failed', data: {} });
    await until(async () => (await deliveriesOf(hook.id))[0]?.attempts === 1, 'refused attempt');
    expect((await deliveriesOf(hook.id))[0]?.last_error).toContain('resolves to a private address (127.0.0.1)');
    expect(receiver.received).toHaveLength(0);
  });

  it('sends a test event to one webhook, and redelivers it with the same webhook-id', async () => {
    receiver = await startReceiver();
    const hook = await createWebhook(server.app.db.kysely, config, server.app.secrets, { teamId: team.teamId, url: receiver.url, eventTypes: ['service.started'], allowPrivate: true });
    worker = new WebhookWorker(server.app.db.kysely, config, server.app.secrets);
    const eventId = await sendTestEvent(server.app.db.kysely, team.teamId, hook.id);
    worker.start();
    await receiver.waitFor(1);
    await until(async () => (await deliveriesOf(hook.id))[0]?.state === 'delivered', 'test delivered');
    expect(await redeliver(server.app.db.kysely, hook.id, (await deliveriesOf(hook.id))[0]!.id)).toBe(true);
    const [first, again] = await receiver.waitFor(2);
    expect(first?.headers['webhook-id']).toBe(eventId);
    expect(again?.headers['webhook-id']).toBe(eventId);
    expect(JSON.parse(again!.body).type).toBe('webhook.test');
  });
});
