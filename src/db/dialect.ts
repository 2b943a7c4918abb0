// Where SQLite and PostgreSQL differ, in one place. Repositories and capabilities write each
// query once with Kysely; what cannot be written once for both engines lives here:
// - How a transaction that checks and then writes begins. SQLite takes its one write lock at
//   BEGIN IMMEDIATE, so "no operation in flight, so queue one" cannot interleave with another
//   writer. PostgreSQL keeps the same rule with a transaction-scoped advisory lock taken right
//   after BEGIN: one such transaction at a time per schema, across every node.
// - How a queue is claimed. On SQLite the write lock already keeps claimers apart. On
//   PostgreSQL a claim does not take that lock: it locks only the rows it takes, with
//   FOR UPDATE SKIP LOCKED, so several nodes take different rows at once instead of waiting.
// - Counts: PostgreSQL's count(*) is a bigint, which pg returns as a string; the pool parses
//   int8 as a number (dialect-postgres.ts), so `countAll<number>()` is a number on both.
// - The raw SQLite handle exists only on SQLite (connect.ts); the prepared-statement fast path of
//   the hot reads exists on both (prepared-queries.ts).
import type { Kysely } from 'kysely';
import { PostgresAdapter, sql } from './kysely-runtime.js';

export type DatabaseEngine = 'sqlite' | 'postgres';

/** Which engine runs behind `db` (also a transaction's or a single connection's Kysely). */
export function engineOf(db: Kysely<any>): DatabaseEngine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * `write`: checks then writes, alone (the single-writer rule above).
 * `claim`: takes rows from a queue; on PostgreSQL with row locks only (see `skipLocked`).
 */
export type TransactionMode = 'write' | 'claim';

/** Advisory lock classes (first key); the second key is the schema, so deployments sharing a database do not wait for each other. */
const WRITE_LOCK_CLASS = 0x74696e66;
export const SCHEMA_LOCK_CLASS = 0x74696e67;

export async function inTransaction<DB, T>(
  db: Kysely<DB>, mode: TransactionMode, work: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  // One connection for the whole callback: Kysely holds it (on SQLite, its only one) until we return.
  return db.connection().execute(async (connection) => {
    await begin(connection, mode);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

async function begin(connection: Kysely<any>, mode: TransactionMode): Promise<void> {
  if (engineOf(connection) === 'sqlite') {
    await sql`begin immediate`.execute(connection);
    return;
  }
  await sql`begin`.execute(connection);
  if (mode === 'write') {
    await sql`select pg_advisory_xact_lock(${sql.lit(WRITE_LOCK_CLASS)}, hashtext(current_schema()))`.execute(connection);
  }
}

interface Lockable<Q> {
  forUpdate(of?: any): Q;
  skipLocked(): Q;
}

/**
 * On PostgreSQL, locks the rows the query returns (of table `of`, when it joins others) and
 * skips rows another claimer has locked; unchanged on SQLite, where the claim transaction's
 * write lock does that job.
 */
export function skipLocked<Q extends Lockable<Q>>(db: Kysely<any>, query: Q, of?: string): Q {
  return engineOf(db) === 'postgres' ? query.forUpdate(of).skipLocked() : query;
}
