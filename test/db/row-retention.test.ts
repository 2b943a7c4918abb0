// Row retention on a real database (SQLite, and PostgreSQL in the postgres project): after
// simulated months of activity the control plane's own tables hold only what the settings keep,
// and deleting a million audit rows never keeps a writer waiting long, because it deletes in
// small batches, each its own short write transaction.
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/kysely-runtime.js';
import { engineOf } from '../../src/db/dialect.js';
import { newId } from '../../src/db/ids.js';
import { insertOperation } from '../../src/db/repositories/operations.js';
import { inWriteTransaction } from '../../src/engine/write-transaction.js';
import { pruneRows } from '../../src/engine/row-retention/prune-rows.js';
import { setRowRetention } from '../../src/engine/row-retention/retention-settings.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

const DAY = 86_400_000;
const DEFAULTS = { audit: 400, webhooks: 30, operations: 90 };
/** The longest a writer may wait for the write lock while a million rows are pruned (a loaded 2-core machine). */
const WRITE_WAIT_BOUND_MS = 1_000;

describe('row retention', () => {
  const open: TestDatabase[] = [];
  afterEach(async () => {
    for (const database of open.splice(0)) await database.close();
  });

  async function database(): Promise<TestDatabase> {
    const opened = await openTestDatabase(undefined, 'rows');
    open.push(opened);
    return opened;
  }

  const iso = (at: number) => new Date(at).toISOString();

  it('after 500 simulated days keeps 400 days of audit, 30 days of ended deliveries and their events, 90 days of operations but every service\'s last', async () => {
    const { db } = await database();
    const k = db.kysely;
    const teamId = await insertTeam(k, { name: 'Busy', plan: 'starter', timezone: 'UTC' });
    const serverId = await insertServer(k, { teamId, name: 'eu-1' });
    const busy = await insertService(k, { teamId, serverId, name: 'busy' });
    const quiet = await insertService(k, { teamId, serverId, name: 'quiet' });
    const webhookId = newId('wh');
    await k.insertInto('webhooks').values({ id: webhookId, team_id: teamId, url: 'https://example.com/hook', description: '', event_types: '*', secret: 'sealed', allow_private: 0, enabled: 1, created_at: iso(0) }).execute();
    const start = Date.parse('2024-01-01T00:00:00Z');
    let quietLast = '';
    let backupOperation = '';
    let pendingEvent = '';
    for (let day = 0; day < 500; day++) {
      const at = start + day * DAY;
      await k.insertInto('audit_log').values([0, 1, 2].map((i) => ({
        id: newId('aud'), team_id: teamId, at: iso(at + i * 1000), actor_type: 'token' as const, actor_id: null, channel: 'api',
        action: 'list_operations', target_type: null, target_id: null, outcome: 'allowed' as const, code: null, detail: null,
      }))).execute();
      for (const serviceId of day === 0 ? [busy, quiet] : [busy]) {
        const operationId = newId('op');
        await insertOperation(k, { teamId, kind: 'backup', serviceId, serverId, parameters: {}, tokenId: null, channel: 'api', idempotencyKey: null, fingerprint: null }, operationId, iso(at));
        await k.updateTable('operations').set({ state: 'succeeded', finished_at: iso(at + 60_000) }).where('id', '=', operationId).execute();
        for (const state of ['queued', 'running', 'succeeded']) {
          await k.insertInto('operation_transitions').values({ id: newId('opt'), operation_id: operationId, state, reason: null, at: iso(at), token_id: null, channel: 'api' }).execute();
        }
        if (serviceId === quiet) quietLast = operationId;
        if (day === 1) {
          backupOperation = operationId;
          await k.insertInto('backups').values({
            id: newId('bak'), team_id: teamId, service_id: busy, state: 'completed', kind: 'manual', size_bytes: 1, sha256: null,
            file_path: null, operation_id: operationId, reason: null, created_at: iso(at), completed_at: iso(at),
          }).execute();
        }
      }
      const states: ('delivered' | 'failed' | 'pending')[] = day === 3 ? ['delivered', 'failed', 'pending'] : ['delivered', 'failed'];
      for (const state of states) {
        const eventId = newId('evt');
        await k.insertInto('events').values({ id: eventId, team_id: teamId, type: 'operation.succeeded', payload: '{}', created_at: iso(at), dispatched_at: iso(at) }).execute();
        await k.insertInto('webhook_deliveries').values({
          id: newId('dlv'), webhook_id: webhookId, event_id: eventId, state, attempts: 1, next_attempt_at: iso(at), created_at: iso(at), updated_at: iso(at + 1000),
        }).execute();
        if (state === 'pending') pendingEvent = eventId;
      }
      if (day % 7 === 6) await pruneRows(db, { owner: 'test', now: at + DAY, fallback: DEFAULTS, batchSize: 50 });
    }
    const now = start + 500 * DAY;
    const counts = await pruneRows(db, { owner: 'test', now, fallback: DEFAULTS, batchSize: 50 });
    expect(counts.ran).toBe(true);

    const audit = await k.selectFrom('audit_log').select(['at']).orderBy('at').execute();
    expect(audit).toHaveLength(400 * 3);
    expect(Date.parse(audit[0]!.at)).toBeGreaterThanOrEqual(now - 400 * DAY);

    const deliveries = await k.selectFrom('webhook_deliveries').select(['state', 'updated_at', 'event_id']).execute();
    const ended = deliveries.filter((row) => row.state !== 'pending');
    expect(ended).toHaveLength(30 * 2);
    for (const row of ended) expect(Date.parse(row.updated_at)).toBeGreaterThanOrEqual(now - 30 * DAY);
    // A delivery still being tried is kept, however old, with its event.
    expect(deliveries.filter((row) => row.state === 'pending').map((row) => row.event_id)).toEqual([pendingEvent]);
    const events = await k.selectFrom('events').select('id').execute();
    expect(events).toHaveLength(30 * 2 + 1);

    const operations = await k.selectFrom('operations').select(['id', 'finished_at', 'service_id']).execute();
    const old = operations.filter((row) => Date.parse(row.finished_at!) < now - 90 * DAY).map((row) => row.id).sort();
    // The quiet service's only (last) operation, and the one a backup names; nothing else older than 90 days.
    expect(old).toEqual([quietLast, backupOperation].sort());
    expect(operations).toHaveLength(90 + 2);
    const orphans = await k.selectFrom('operation_transitions as t').leftJoin('operations as o', 'o.id', 't.operation_id')
      .select('t.id').where('o.id', 'is', null).execute();
    expect(orphans).toEqual([]);
    expect(await k.selectFrom('operation_transitions').select('id').execute()).toHaveLength(operations.length * 3);

    // The operator's setting, kept in the database, wins over the environment's.
    await setRowRetention(k, 'audit', 10);
    await pruneRows(db, { owner: 'test', now, fallback: DEFAULTS });
    expect(await k.selectFrom('audit_log').select('id').execute()).toHaveLength(10 * 3);
  }, 120_000);

  it(`prunes a million audit rows without keeping a writer waiting for the write lock more than ${WRITE_WAIT_BOUND_MS} ms`, async () => {
    const { db } = await database();
    const k = db.kysely;
    const columns = sql`(id, team_id, at, actor_type, actor_id, channel, action, target_type, target_id, outcome, code, detail)`;
    if (engineOf(k) === 'postgres') {
      await sql`insert into audit_log ${columns} select 'aud_' || lpad(i::text, 20, '0'), null, '2020-01-01T00:00:00.000Z', 'operator', null,
        'cli', 'old', null, null, 'allowed', null, null from generate_series(1, 1000000) as i`.execute(k);
    } else {
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000000)
        insert into audit_log ${columns} select 'aud_' || printf('%020d', i), null, '2020-01-01T00:00:00.000Z', 'operator', null,
        'cli', 'old', null, null, 'allowed', null, null from n`.execute(k);
    }
    let pruning = true;
    const waits: number[] = [];
    const writer = (async () => {
      while (pruning) {
        const asked = performance.now();
        await inWriteTransaction(k, async (trx) => {
          waits.push(performance.now() - asked);
          await trx.insertInto('audit_log').values({
            id: newId('aud'), team_id: null, at: new Date().toISOString(), actor_type: 'operator', actor_id: null, channel: 'cli',
            action: 'new', target_type: null, target_id: null, outcome: 'allowed', code: null, detail: null,
          }).execute();
        });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const started = performance.now();
    const counts = await pruneRows(db, { owner: 'test', now: Date.now(), fallback: DEFAULTS });
    pruning = false;
    await writer;
    const longest = Math.max(...waits);
    console.log(`pruned ${counts.audit} audit rows in ${Math.round(performance.now() - started)} ms; ${waits.length} writes meanwhile, longest write-lock wait ${longest.toFixed(1)} ms`);
    expect(counts.audit).toBe(1_000_000);
    expect(waits.length).toBeGreaterThan(10);
    expect(longest).toBeLessThan(WRITE_WAIT_BOUND_MS);
    const left = await k.selectFrom('audit_log').select((eb) => eb.fn.countAll<number>().as('count')).where('action', '=', 'old').executeTakeFirstOrThrow();
    expect(Number(left.count)).toBe(0);
  }, 600_000);
});
