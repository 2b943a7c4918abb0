// A transaction that takes SQLite's write lock at BEGIN (IMMEDIATE), so a check and the write
// that depends on it ("no operation in flight" -> insert one) cannot interleave with another
// writer, in this process (Kysely holds its single connection for the whole callback) or in
// another one sharing the file. With PostgreSQL this becomes SELECT ... FOR UPDATE.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';

export async function inWriteTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
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
