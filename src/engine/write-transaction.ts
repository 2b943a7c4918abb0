// The engine's two kinds of transaction (how each begins on each engine: src/db/dialect.ts).
// - A write transaction holds the database's one write lock from BEGIN, so a check and the
//   write that depends on it ("no operation in flight" -> insert one) cannot interleave with
//   another writer: in this process, in another one sharing the SQLite file, or on another
//   node sharing PostgreSQL.
// - A claim transaction takes operations from the queue. On SQLite it is a write transaction;
//   on PostgreSQL it locks only the rows it takes (FOR UPDATE SKIP LOCKED), so nodes claiming
//   at the same moment take different operations instead of queueing behind one lock.
import type { Kysely } from 'kysely';
import { inTransaction } from '../db/dialect.js';
import type { Database } from '../db/tables.js';

export function inWriteTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return inTransaction(db, 'write', work);
}

export function inClaimTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return inTransaction(db, 'claim', work);
}
