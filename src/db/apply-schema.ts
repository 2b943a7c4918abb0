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

export function applySchema(sqlite: { exec(sql: string): unknown }): void {
  for (const statement of schemaStatements()) sqlite.exec(statement);
}
