// A search by part of a name, the same on SQLite and PostgreSQL: lower() on both sides (SQLite's
// LIKE ignores ASCII case, PostgreSQL's does not), with the wildcards a person may type escaped so
// that "50%" finds "50%" and not everything.
import { sql, type RawBuilder, type SqlBool } from 'kysely';

export function nameContains(column: string, search: string): RawBuilder<SqlBool> {
  const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

/** What a search field sent, trimmed and bounded: a longer query finds nothing a shorter one would not. */
export function searchTerm(value: unknown): string {
  return typeof value === 'string' ? value.trim().slice(0, 100) : '';
}
