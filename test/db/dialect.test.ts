// What differs between SQLite and PostgreSQL (src/db/dialect.ts), checked on the engine of the
// current vitest project against the real database: the schema applied again changes nothing,
// counts and BIGINT columns are numbers, check-then-write transactions do not interleave, and
// claimers take different rows.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { engineOf, inTransaction } from '../../src/db/dialect.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { insertOperation, listClaimCandidates, takeLease } from '../../src/db/repositories/operations.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { openTestDatabase, testEngine, type TestDatabase } from '../support/database.js';

const engine = testEngine();

describe(`database dialect (${engine})`, () => {
  const opened: TestDatabase[] = [];
  afterEach(async () => {
    for (const database of opened.splice(0)) await database.close();
  });

  async function open(): Promise<TestDatabase> {
    const database = await openTestDatabase(engine, 'dialect');
    opened.push(database);
    return database;
  }

  async function seedService(database: TestDatabase) {
    const db = database.db.kysely;
    const teamId = await insertTeam(db, { name: 'Dialect', plan: 'starter', timezone: 'UTC' });
    const serverId = await insertServer(db, { teamId, name: 'one' });
    const serviceId = await insertService(db, { teamId, serverId, name: 'ERP' });
    return { teamId, serverId, serviceId };
  }

  it('reports the engine it runs on', async () => {
    const { db } = await open();
    expect(db.engine).toBe(engine);
    expect(engineOf(db.kysely)).toBe(engine);
    await db.kysely.transaction().execute(async (trx) => expect(engineOf(trx)).toBe(engine));
  });

  it('applies schema.sql again on the same database without changing or losing anything', async () => {
    const database = await open();
    const { teamId } = await seedService(database);
    // SQLite skips the statements on a database that has this schema.sql's fingerprint (apply-schema.ts): without it, they run.
    database.db.sqlite?.pragma('user_version = 0');
    const again = openDatabase(database.dataDir, database.url ? { url: database.url, poolSize: 2 } : undefined);
    try {
      await again.ready();
      const teams = await again.kysely.selectFrom('teams').select(['id', 'name']).execute();
      expect(teams).toEqual([{ id: teamId, name: 'Dialect' }]);
    } finally {
      await again.close();
    }
  });

  it('returns count(*) and BIGINT columns as numbers, as SQLite does', async () => {
    const database = await open();
    const { teamId, serviceId } = await seedService(database);
    const db = database.db.kysely;
    // More than PostgreSQL's INTEGER holds: a backup of a large ERP database.
    const size = 5 * 1024 ** 3;
    await db.insertInto('backups').values({
      id: newId('bak'), team_id: teamId, service_id: serviceId, state: 'completed', kind: 'manual', size_bytes: size,
      sha256: null, file_path: null, operation_id: null, reason: null, created_at: nowIso(), completed_at: nowIso(),
    }).execute();
    const backup = await db.selectFrom('backups').select('size_bytes').executeTakeFirstOrThrow();
    expect(backup.size_bytes).toBe(size);
    const count = await db.selectFrom('erp_services').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    expect(count.count).toBe(1);
  });

  it('runs check-then-write transactions one at a time, so only one of ten concurrent requests inserts', async () => {
    const database = await open();
    const { teamId, serverId, serviceId } = await seedService(database);
    const db = database.db.kysely;
    const attempt = () => inTransaction(db, 'write', async (trx) => {
      const busy = await trx.selectFrom('operations').select('id').where('service_id', '=', serviceId)
        .where('state', 'in', ['queued', 'running']).executeTakeFirst();
      if (busy) return false;
      // Widen the window in which another transaction could see "nothing in flight" too.
      await sleep(20);
      await insertOperation(trx, {
        teamId, kind: 'start', serviceId, serverId, parameters: {}, tokenId: null, channel: 'api', idempotencyKey: null, fingerprint: null,
      }, newId('op'), nowIso());
      return true;
    });
    const outcomes = await Promise.all(Array.from({ length: 10 }, attempt));
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    const rows = await db.selectFrom('operations').select('id').where('service_id', '=', serviceId).execute();
    expect(rows).toHaveLength(1);
  });

  it('lets two claimers at the same moment take different operations, each once', async () => {
    const database = await open();
    const { teamId, serverId, serviceId } = await seedService(database);
    const db = database.db.kysely;
    for (let index = 0; index < 6; index += 1) {
      await insertOperation(db, {
        teamId, kind: 'stop', serviceId, serverId, parameters: {}, tokenId: null, channel: 'api', idempotencyKey: null, fingerprint: null,
      }, newId('op'), nowIso());
    }
    const claim = (owner: string, holdMs: number) => inTransaction(db, 'claim', async (trx) => {
      const at = nowIso();
      const candidates = await listClaimCandidates(trx, owner, { node: 'n1', now: at, localOwnerPrefix: 'nowhere/', limit: 3 });
      const taken: string[] = [];
      for (const candidate of candidates) {
        if (await takeLease(trx, candidate, owner, new Date(Date.now() + 60_000).toISOString(), at)) taken.push(candidate.id);
      }
      await sleep(holdMs);
      return taken;
    });
    const started = Date.now();
    // The first claimer holds its rows for 3 s: a second that waited for it would take at least that
    // long, one that skipped them takes milliseconds, and a loaded machine stays far from either.
    const slow = claim('slow/1/a', 3_000);
    await sleep(50);
    const fast = await claim('fast/1/b', 0);
    const fastMs = Date.now() - started;
    const slowTaken = await slow;
    expect(slowTaken).toHaveLength(3);
    expect(fast).toHaveLength(3);
    expect(new Set([...slowTaken, ...fast]).size).toBe(6);
    // PostgreSQL: the second claimer skipped the rows the first one holds instead of waiting for
    // it (SQLite has one writer at a time, so there it waits).
    if (engine === 'postgres') expect(fastMs).toBeLessThan(2_500);
  });
});
