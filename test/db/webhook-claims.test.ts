// The webhook queue shared by every node: events fanned out into deliveries once, and each due
// delivery leased to one worker, even when several do it at the same moment (on PostgreSQL,
// several connections really at once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent } from '../../src/db/repositories/events.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { claimDueDeliveries, dispatchEvents, insertWebhook } from '../../src/db/repositories/webhooks.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../src/secrets/secrets-key.js';
import { openTestDatabase, testEngine, type TestDatabase } from '../support/database.js';

const engine = testEngine();

describe(`webhook queue claims (${engine})`, () => {
  let database: TestDatabase;
  let teamId: string;
  let webhookIds: string[];
  beforeAll(async () => {
    database = await openTestDatabase(engine, 'webhooks');
    const db = database.db.kysely;
    teamId = await insertTeam(db, { name: 'Hooks', plan: 'starter', timezone: 'UTC' });
    webhookIds = [];
    const secrets = new SecretBox(loadSecretsKeys(database.dataDir));
    for (const url of ['https://a.example/hook', 'https://b.example/hook']) {
      webhookIds.push((await insertWebhook(db, secrets, { teamId, url, description: '', eventTypes: '*', allowPrivate: false })).id);
    }
  });
  afterAll(async () => { await database.close(); });

  it('fans each event out once per webhook when four dispatchers run at the same moment', async () => {
    const db = database.db.kysely;
    const eventIds: string[] = [];
    for (let index = 0; index < 30; index += 1) eventIds.push(await insertEvent(db, { teamId, type: 'service.started', data: { index } }));
    const dispatched = await Promise.all(Array.from({ length: 4 }, () => dispatchEvents(db, 10)));
    // Whatever one round left, the next takes.
    while ((await dispatchEvents(db, 10)) > 0) { /* until none is left */ }
    expect(dispatched.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(30);
    const deliveries = await db.selectFrom('webhook_deliveries').select(['webhook_id', 'event_id']).execute();
    expect(deliveries).toHaveLength(eventIds.length * webhookIds.length);
    expect(new Set(deliveries.map((row) => `${row.webhook_id} ${row.event_id}`)).size).toBe(deliveries.length);
    const undispatched = await db.selectFrom('events').select('id').where('dispatched_at', 'is', null).execute();
    expect(undispatched).toEqual([]);
  });

  it('leases each due delivery to one of four workers claiming at the same moment', async () => {
    const db = database.db.kysely;
    const claims = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((owner) => claimDueDeliveries(db, owner, 60_000, 20)));
    const claimed = claims.flat().map((delivery) => delivery.id);
    const due = await db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'pending').execute();
    expect(claimed.length).toBeGreaterThan(0);
    expect(new Set(claimed).size).toBe(claimed.length);
    // Each lease is held by the worker that got the row.
    for (const [index, owner] of ['w1', 'w2', 'w3', 'w4'].entries()) {
      for (const delivery of claims[index]!) {
        const row = await db.selectFrom('webhook_deliveries').select('lease_owner').where('id', '=', delivery.id).executeTakeFirstOrThrow();
        expect(row.lease_owner).toBe(owner);
      }
    }
    // Leased rows are not handed out again while their lease lasts.
    expect(await claimDueDeliveries(db, 'w5', 60_000, 200)).toHaveLength(due.length - claimed.length);
  });
});
