// The operator's app definitions (table app_definitions): their Compose text by name. Reading
// them as models is src/engine/apps/app-registry.ts's job.
import type { Kysely } from 'kysely';
import { nowIso } from '../ids.js';
import type { Database } from '../tables.js';

export async function findAppDefinitionSource(db: Kysely<Database>, name: string): Promise<string | null> {
  const row = await db.selectFrom('app_definitions').select('source').where('name', '=', name).executeTakeFirst();
  return row?.source ?? null;
}

export async function listAppDefinitionRows(db: Kysely<Database>): Promise<{ name: string; source: string; created_at: string; updated_at: string }[]> {
  return db.selectFrom('app_definitions').select(['name', 'source', 'created_at', 'updated_at']).orderBy('name').execute();
}

/**
 * The row's `created_at` (when the name was first added, kept by a replace); null when the name
 * is taken and `replace` is not set (the row is left as it was).
 */
export async function saveAppDefinition(db: Kysely<Database>, name: string, source: string, replace: boolean): Promise<string | null> {
  const now = nowIso();
  const inserted = await db.insertInto('app_definitions').values({ name, source, created_at: now, updated_at: now })
    .onConflict((conflict) => (replace ? conflict.column('name').doUpdateSet({ source, updated_at: now }) : conflict.column('name').doNothing()))
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return null;
  const row = await db.selectFrom('app_definitions').select('created_at').where('name', '=', name).executeTakeFirstOrThrow();
  return row.created_at;
}
