// The few schema changes that `CREATE ... IF NOT EXISTS` and `ADD COLUMN IF NOT EXISTS` cannot
// express, applied at start after schema.sql, idempotently: a database made by an earlier version
// is brought to what schema.sql now says; a current one is left as it is.
//
// Today there are two:
// - operations.state accepts 'awaiting_approval' (decisions and approvals);
// - download_links.token_id may be null: a link a member asked for in the panel names the member
//   (user_id) and no token.
// A CHECK or NOT NULL constraint cannot be changed in place in SQLite, so the table is rebuilt
// under the same definition, changed; PostgreSQL changes the constraint.
import type pg from 'pg';

const OLD_STATES = "'queued', 'running', 'succeeded', 'failed')";
const NEW_STATES = "'queued', 'running', 'succeeded', 'failed', 'awaiting_approval')";
const LINK_TOKEN_REQUIRED = /\btoken_id(\s+)TEXT NOT NULL\b/;

interface SqliteHandle {
  exec(sql: string): unknown;
  pragma(sql: string, options?: { simple: boolean }): unknown;
  prepare(sql: string): { get(...params: unknown[]): unknown };
  transaction<T>(fn: () => T): () => T;
}

/** True when it changed something (the caller then re-applies schema.sql for the indexes the rebuild dropped). */
export function upgradeSqliteSchema(sqlite: SqliteHandle): boolean {
  const widened = rebuildSqliteTable(sqlite, 'operations', (sql) =>
    (sql.includes('awaiting_approval') || !sql.includes(OLD_STATES) ? undefined : sql.replace(OLD_STATES, NEW_STATES)));
  const loosened = rebuildSqliteTable(sqlite, 'download_links', (sql) =>
    (LINK_TOKEN_REQUIRED.test(sql) ? sql.replace(LINK_TOKEN_REQUIRED, 'token_id$1TEXT') : undefined));
  return widened || loosened;
}

/** Rebuilds `table` under the definition `change` makes of its own, unless it makes none (undefined). */
function rebuildSqliteTable(sqlite: SqliteHandle, table: string, change: (sql: string) => string | undefined): boolean {
  const row = sqlite.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string } | undefined;
  const changed = row && change(row.sql);
  if (!changed) return false;
  const definition = changed.replace(new RegExp(`^CREATE TABLE\\s+("?)${table}\\1`, 'i'), `CREATE TABLE ${table}_rebuilt`);
  // Foreign keys off for the swap (a pragma that does nothing inside a transaction): dropping the
  // old table must not cascade to the rows that refer to it (operation_transitions), which still
  // refer to the same ids.
  sqlite.pragma('foreign_keys = OFF');
  try {
    sqlite.transaction(() => {
      sqlite.exec(definition);
      sqlite.exec(`INSERT INTO ${table}_rebuilt SELECT * FROM ${table}`);
      sqlite.exec(`DROP TABLE ${table}`);
      sqlite.exec(`ALTER TABLE ${table}_rebuilt RENAME TO ${table}`);
      const broken = sqlite.pragma('foreign_key_check', { simple: false }) as unknown[];
      if (broken.length > 0) throw new Error(`rebuilding ${table} left ${broken.length} broken references`);
    })();
  } finally {
    sqlite.pragma('foreign_keys = ON');
  }
  return true;
}

/** The same on PostgreSQL, under the schema lock the caller holds. */
export async function upgradePostgresSchema(client: pg.PoolClient): Promise<void> {
  // Asked first: an ALTER, even one that changes nothing, locks the table against the other nodes' reads.
  const link = await client.query<{ is_nullable: string }>(
    `SELECT is_nullable FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'download_links' AND column_name = 'token_id'`,
  );
  if (link.rows[0]?.is_nullable === 'NO') await client.query('ALTER TABLE download_links ALTER COLUMN token_id DROP NOT NULL');
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
