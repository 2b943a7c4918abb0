// The few schema changes that `CREATE ... IF NOT EXISTS` and `ADD COLUMN IF NOT EXISTS` cannot
// express, applied at start after schema.sql, idempotently: a database made by an earlier version
// is brought to what schema.sql now says; a current one is left as it is.
//
// Today there is one: operations.state accepts 'awaiting_approval' (decisions and approvals).
// A CHECK constraint cannot be changed in place in SQLite, so the table is rebuilt under the same
// definition with the wider list; PostgreSQL replaces the constraint.
import type pg from 'pg';

const OLD_STATES = "'queued', 'running', 'succeeded', 'failed')";
const NEW_STATES = "'queued', 'running', 'succeeded', 'failed', 'awaiting_approval')";

interface SqliteHandle {
  exec(sql: string): unknown;
  pragma(sql: string, options?: { simple: boolean }): unknown;
  prepare(sql: string): { get(...params: unknown[]): unknown };
  transaction<T>(fn: () => T): () => T;
}

/** True when it changed something (the caller then re-applies schema.sql for the indexes the rebuild dropped). */
export function upgradeSqliteSchema(sqlite: SqliteHandle): boolean {
  const row = sqlite.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'operations'").get() as { sql: string } | undefined;
  if (!row || row.sql.includes('awaiting_approval') || !row.sql.includes(OLD_STATES)) return false;
  const widened = row.sql.replace(OLD_STATES, NEW_STATES).replace(/^CREATE TABLE\s+("?)operations\1/i, 'CREATE TABLE operations_widened');
  // Foreign keys off for the swap (a pragma that does nothing inside a transaction): dropping the
  // old table must not cascade to operation_transitions, whose rows still refer to the same ids.
  sqlite.pragma('foreign_keys = OFF');
  try {
    sqlite.transaction(() => {
      sqlite.exec(widened);
      sqlite.exec('INSERT INTO operations_widened SELECT * FROM operations');
      sqlite.exec('DROP TABLE operations');
      sqlite.exec('ALTER TABLE operations_widened RENAME TO operations');
      const broken = sqlite.pragma('foreign_key_check', { simple: false }) as unknown[];
      if (broken.length > 0) throw new Error(`widening operations.state left ${broken.length} broken references`);
    })();
  } finally {
    sqlite.pragma('foreign_keys = ON');
  }
  return true;
}

/** The same on PostgreSQL, under the schema lock the caller holds. */
export async function upgradePostgresSchema(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
     WHERE conrelid = 'operations'::regclass AND contype = 'c'`,
  );
  const stateCheck = rows.find((constraint) => constraint.definition.includes("'queued'"));
  if (!stateCheck || stateCheck.definition.includes('awaiting_approval')) return;
  await client.query('BEGIN');
  try {
    await client.query(`ALTER TABLE operations DROP CONSTRAINT "${stateCheck.name.replace(/"/g, '""')}"`);
    await client.query(`ALTER TABLE operations ADD CONSTRAINT operations_state_check CHECK (state IN (${NEW_STATES})`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
