// Applies schema.sql statement by statement. Every statement is idempotent, so a second run on
// the same data changes nothing; on SQLite it runs at a start that does not find this
// schema.sql's fingerprint in the database (schemaFingerprint, below), on PostgreSQL at every
// start (dialect-postgres.ts, asynchronously); this is SQLite's synchronous path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { packageRoot } from '../package-root.js';

let schemaText: string | undefined;

/** schema.sql as shipped; read once per process. */
function schemaSource(): string {
  return (schemaText ??= readFileSync(join(packageRoot, 'schema.sql'), 'utf8'));
}

export function schemaStatements(): string[] {
  return schemaSource()
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n')
    .split(';')
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}

// PostgreSQL runs `ALTER TABLE t ADD COLUMN IF NOT EXISTS c ...` as written; SQLite has no
// such clause, so here it is read as "add the column unless table_info lists it".
const ADD_COLUMN = /^ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+) (.+)$/is;

export function applySchema(sqlite: { exec(sql: string): unknown; pragma(sql: string): unknown }): void {
  for (const statement of schemaStatements()) {
    const addColumn = ADD_COLUMN.exec(statement);
    if (!addColumn) {
      sqlite.exec(statement);
      continue;
    }
    const [, table, column, definition] = addColumn as unknown as [string, string, string, string];
    const columns = sqlite.pragma(`table_info(${table})`) as { name: string }[];
    if (!columns.some((existing) => existing.name === column)) sqlite.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

interface UserVersion { pragma(sql: string, options?: { simple?: boolean }): unknown }

/**
 * schema.sql's fingerprint (its CRC-32, kept positive), which a SQLite database holds as its
 * `user_version` once this schema.sql's statements (and upgrades) ran on it. Applying the 117
 * statements to a database that already has them took 3 to 5 ms of every start; `teaminfra mcp`
 * starts for every conversation (src/mcp/README.md, "Stdio start"). Another schema.sql (an
 * upgrade, or an older teaminfra on the same data) has another fingerprint, and runs them.
 */
export function schemaFingerprint(): number {
  return (crc32(schemaSource()) >>> 1) || 1;
}

export function sqliteSchemaIsCurrent(sqlite: UserVersion): boolean {
  return sqlite.pragma('user_version', { simple: true }) === schemaFingerprint();
}

export function markSqliteSchemaCurrent(sqlite: UserVersion): void {
  sqlite.pragma(`user_version = ${schemaFingerprint()}`);
}
