// Applies schema.sql statement by statement. Every statement is idempotent, so this runs at
// every start and a second start on the same data changes nothing. The same statements run on
// PostgreSQL (dialect-postgres.ts, asynchronously); this is SQLite's synchronous path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

export function schemaStatements(): string[] {
  const text = readFileSync(join(packageRoot, 'schema.sql'), 'utf8');
  return text
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
