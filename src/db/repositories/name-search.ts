// A search by part of a name, ignoring case, with the wildcards a person may type escaped so that
// "50%" finds "50%" and not everything. SQLite's LIKE already ignores (ASCII) case, as its lower()
// would, and without a function call per row the walk of a team's names costs half as much;
// PostgreSQL's LIKE does not, so it is ILIKE there.
import type { Kysely, RawBuilder, SqlBool } from 'kysely';
import { sql } from '../kysely-runtime.js';
import { engineOf } from '../dialect.js';
import type { Database } from '../tables.js';

export function nameContains(db: Kysely<Database>, column: string, search: string): RawBuilder<SqlBool> {
  const pattern = `%${search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
  return engineOf(db) === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} ilike ${pattern} escape '\\'`
    : sql<SqlBool>`${sql.ref(column)} like ${pattern} escape '\\'`;
}

/** What a search field sent, trimmed and bounded: a longer query finds nothing a shorter one would not. */
export function searchTerm(value: unknown): string {
  return typeof value === 'string' ? value.trim().slice(0, 100) : '';
}
