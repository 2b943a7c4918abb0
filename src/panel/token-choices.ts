// What a token's access can be narrowed to: the team's ERP services (with how many copies each
// has) and its servers. A form never offers the whole team: it offers what is already chosen,
// then the first matches of a search (the search field asks `/panel/token-choices/…` as one
// types, or the form is sent with "Find" when scripts are off). Every read here is by key or a
// bounded walk of the team's index, whatever the size of the team.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { App } from '../app.js';
import type { Database } from '../db/tables.js';
import { nameContains, searchTerm } from '../db/repositories/name-search.js';
import { servicesNamed } from '../db/repositories/service-name-search.js';
import { requireTeamSession } from './session-guard.js';
import type { Choices, FormBody, KnownChoices } from './token-form.js';

/** Matches a search offers, beside what is already chosen. */
export const CHOICE_MATCHES = 20;
export const CHOICES_PATH = '/panel/token-choices';

type ServiceChoice = Choices['services'][number];
type ServerChoice = Choices['servers'][number];
const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
/** More ids than any form offers are not looked up: the check below then names them unknown. */
const bounded = (ids: string[]) => [...new Set(ids)].slice(0, 1000);

/**
 * Services that are no copy, live, of the team: the ones with these ids, or the first matching a
 * search, and whether that search read every name (service-name-search.ts stops a long walk).
 */
async function findServices(
  db: Kysely<Database>, teamId: string, by: { ids: string[] } | { search: string; excluding: string[] },
): Promise<{ services: ServiceChoice[]; searchedAll: boolean }> {
  let rows: { id: string; name: string }[];
  let searchedAll = true;
  if ('ids' in by) {
    if (by.ids.length === 0) return { services: [], searchedAll };
    rows = await db.selectFrom('erp_services').select(['id', 'name'])
      .where('team_id', '=', teamId).where('parent_id', 'is', null).where('deleted_at', 'is', null)
      .where('id', 'in', by.ids).orderBy('id').execute();
  } else {
    const found = await servicesNamed(db, { teamId, search: by.search, excluding: by.excluding, limit: CHOICE_MATCHES });
    rows = found.services;
    searchedAll = found.searchedTo === undefined;
  }
  const copies = await countCopies(db, rows.map((row) => row.id));
  return { services: rows.map((row) => ({ ...row, copies: copies.get(row.id) ?? 0 })), searchedAll };
}

async function countCopies(db: Kysely<Database>, parentIds: string[]): Promise<Map<string, number>> {
  if (parentIds.length === 0) return new Map();
  const rows = await db.selectFrom('erp_services').select(['parent_id', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('parent_id', 'in', parentIds).where('deleted_at', 'is', null).groupBy('parent_id').execute();
  return new Map(rows.map((row) => [row.parent_id as string, Number(row.count)]));
}

async function findServers(db: Kysely<Database>, teamId: string, by: { ids: string[] } | { search: string; excluding: string[] }): Promise<ServerChoice[]> {
  let query = db.selectFrom('servers').select(['id', 'name']).where('team_id', '=', teamId).where('deleted_at', 'is', null);
  if ('ids' in by) {
    if (by.ids.length === 0) return [];
    query = query.where('id', 'in', by.ids);
  } else {
    if (by.search) query = query.where(nameContains(db, 'name', by.search));
    if (by.excluding.length > 0) query = query.where('id', 'not in', by.excluding);
    query = query.limit(CHOICE_MATCHES);
  }
  return query.orderBy('id').execute();
}

/** What the form offers: the chosen services and servers (of this team), then the first matches of each search field. */
export async function tokenChoices(db: Kysely<Database>, teamId: string, values: FormBody = {}): Promise<Choices> {
  const chosenServiceIds = bounded(asList(values.services));
  const chosenServerIds = bounded(asList(values.servers));
  const [chosenServices, matchingServices, chosenServers, matchingServers] = await Promise.all([
    findServices(db, teamId, { ids: chosenServiceIds }),
    findServices(db, teamId, { search: searchTerm(values.service_search), excluding: chosenServiceIds }),
    findServers(db, teamId, { ids: chosenServerIds }),
    findServers(db, teamId, { search: searchTerm(values.server_search), excluding: chosenServerIds }),
  ]);
  return {
    services: [...chosenServices.services, ...matchingServices.services], servicesSearchedAll: matchingServices.searchedAll,
    servers: [...chosenServers, ...matchingServers],
  };
}

/** Which of the submitted ids are this team's: one query by key for each kind, for parseTokenForm. */
export async function knownChoices(db: Kysely<Database>, teamId: string, body: FormBody): Promise<KnownChoices> {
  const [services, servers] = await Promise.all([
    findIds(db, 'erp_services', teamId, bounded(asList(body.services))),
    findIds(db, 'servers', teamId, bounded(asList(body.servers))),
  ]);
  return { services, servers };
}

async function findIds(db: Kysely<Database>, table: 'erp_services' | 'servers', teamId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  let query = db.selectFrom(table).select('id').where('team_id', '=', teamId).where('id', 'in', ids).where('deleted_at', 'is', null);
  if (table === 'erp_services') query = query.where('parent_id' as never, 'is', null);
  return new Set((await query.execute()).map((row) => row.id));
}

/** Names of services and servers by id, for the rows a page shows (the API Tokens list). */
export async function choiceNames(db: Kysely<Database>, teamId: string, serviceIds: string[], serverIds: string[]): Promise<Map<string, string>> {
  const [services, servers] = await Promise.all([
    serviceIds.length === 0 ? [] : db.selectFrom('erp_services').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', [...new Set(serviceIds)]).execute(),
    serverIds.length === 0 ? [] : db.selectFrom('servers').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', [...new Set(serverIds)]).execute(),
  ]);
  return new Map([...services, ...servers].map((row) => [row.id, row.name]));
}

/**
 * The search field's questions: JSON `{ matches: [{ id, name, copies? }], searched_all }`, at most
 * CHOICE_MATCHES, for any member signed in to the team (the Overview shows them the same names);
 * `searched_all` is false when a search of services stopped before it read every name.
 * A read, so no CSRF token; the panel's same-origin hook and the session cookie still apply.
 */
export function registerTokenChoices(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  server.get<{ Params: { kind: string }; Querystring: { q?: string } }>(`${CHOICES_PATH}/:kind`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const by = { search: searchTerm(request.query.q), excluding: [] };
    if (request.params.kind === 'services') {
      const found = await findServices(db, session.team.id, by);
      return reply.header('Cache-Control', 'no-store').send({ matches: found.services, searched_all: found.searchedAll });
    }
    if (request.params.kind === 'servers') return reply.header('Cache-Control', 'no-store').send({ matches: await findServers(db, session.team.id, by), searched_all: true });
    return reply.callNotFound();
  });
}
