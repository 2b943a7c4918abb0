// Which apps a team may pick: the bundled definitions (files shipped with teaminfra) and those
// the operator added (app_definitions rows). Both are parsed by the same code when read; a
// bundled name cannot be taken by an added one, so `demo` always means today's image.
import type { Kysely } from 'kysely';
import { findAppDefinitionSource, listAppDefinitionRows, saveAppDefinition } from '../../db/repositories/app-definitions.js';
import type { Database } from '../../db/tables.js';
import type { AppDefinition } from './app-definition.js';
import { bundledApp, BUNDLED_APP_NAMES } from './bundled-apps.js';
import { AppDefinitionError, parseAppDefinition } from './parse-app-definition.js';

export interface ListedApp {
  name: string;
  origin: 'bundled' | 'added';
  web: { service: string; port: number };
  database: string | null;
  services: { name: string; image: string }[];
  added_at: string | null;
  /** Set on an added definition that today's rules refuse: why, one sentence per problem. */
  refused?: string[];
}

export async function findApp(db: Kysely<Database>, name: string): Promise<AppDefinition | null> {
  const bundled = bundledApp(name);
  if (bundled) return bundled;
  const source = await findAppDefinitionSource(db, name);
  return source === null ? null : parseAppDefinition(source, name);
}

/**
 * Parses and stores an operator's definition; refuses a bundled name, and a taken one unless
 * `replace`. `addedAt`: when the name was first added (as list-apps says).
 */
export async function addApp(
  db: Kysely<Database>, source: string, options: { name?: string; replace: boolean },
): Promise<{ app: AppDefinition; addedAt: string }> {
  const app = parseAppDefinition(source, options.name);
  if ((BUNDLED_APP_NAMES as readonly string[]).includes(app.name)) {
    throw new AppDefinitionError([`"${app.name}" is the name of a bundled app; give this one another name (--name).`]);
  }
  const addedAt = await saveAppDefinition(db, app.name, source, options.replace);
  if (addedAt === null) {
    throw new AppDefinitionError([`An app named "${app.name}" already exists; pass --replace to change it, or give another name (--name).`]);
  }
  return { app, addedAt };
}

export async function listApps(db: Kysely<Database>): Promise<ListedApp[]> {
  const listed = BUNDLED_APP_NAMES.map((name) => summary(bundledApp(name)!, 'bundled', null));
  for (const row of await listAppDefinitionRows(db)) {
    // A definition added under rules that have since become stricter is listed as refused, not hidden.
    try {
      listed.push(summary(parseAppDefinition(row.source, row.name), 'added', row.created_at));
    } catch (error) {
      if (!(error instanceof AppDefinitionError)) throw error;
      listed.push({ name: row.name, origin: 'added', web: { service: '', port: 0 }, database: null, services: [], added_at: row.created_at, refused: error.problems });
    }
  }
  return listed;
}

export function summary(app: AppDefinition, origin: ListedApp['origin'], addedAt: string | null): ListedApp {
  return {
    name: app.name, origin, web: { service: app.web.service, port: app.web.port }, database: app.database?.service ?? null,
    services: app.containers.map((container) => ({ name: container.name, image: container.image })), added_at: addedAt,
  };
}
