// Webhooks through `teaminfra serve` as a real process: a real change is delivered signed, and
// an event committed just before the process died is delivered after it restarts.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { insertEvent } from '../../src/db/repositories/events.js';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { admin, seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

describe('webhooks delivered by teaminfra serve', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers a real change signed, and an event left undelivered by a killed process after restart', async () => {
    receiver = await startReceiver();
    const { teamId: team, serverId: server, serviceId: service, token } = await seedThroughCli(dataDir, { team: 'Hooks', service: 'Shop' });
    const hook = await admin(dataDir, ['create-webhook', '--team', team, '--url', receiver.url, '--events', 'service.started,service.stopped,decision.needed', '--allow-private']);

    serve = await startServe(dataDir);
    const started = await fetch(`${serve.baseUrl}/api/service-erp/${service}/start`, {
      method: 'POST', headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
    expect(started.status).toBe(202);
    const [first] = await receiver.waitFor(1, 20_000);
    const event = verifyWebhook<{ type: string; data: { service: { id: string } } }>(hook.secret, first!.headers as Record<string, string>, first!.body);
    expect(event.type).toBe('service.started');
    expect(event.data.service.id).toBe(service);
    await fetch(`${serve.baseUrl}/api/service-erp/${service}/stop`, {
      method: 'POST', headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
    await receiver.waitFor(2, 20_000);

    // The process dies; a change committed with its event just before is still in the outbox.
    await serve.stop('SIGKILL');
    const db = openDatabase(dataDir);
    const eventId = await insertEvent(db.kysely, { teamId: team, type: 'decision.needed', data: { question: 'Deploy on Friday?' } });
    await db.close();
    serve = await startServe(dataDir);
    const received = await receiver.waitFor(3, 20_000);
    expect(received[2]?.headers['webhook-id']).toBe(eventId);
    expect(verifyWebhook(hook.secret, received[2]!.headers as Record<string, string>, received[2]!.body)).toMatchObject({ type: 'decision.needed' });
    // Exactly once each.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(new Set(receiver.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(receiver.received.length);
    await serve.stop();
    serve = undefined;
  }, 90_000);
});
