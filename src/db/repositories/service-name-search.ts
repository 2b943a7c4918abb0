// Services found by part of their name, at a cost that does not grow with the team.
//
// A search of three characters or more looks first at how many of the team's services hold each
// of its three-character pieces (service_name_grams, counted only up to RARE_ENOUGH), and reads
// the candidates of the rarest piece: one index range of at most RARE_ENOUGH rows, then the
// candidates by key, each checked against the whole search. "Customer 5001 ERP" among ten
// thousand "Customer N ERP" reads the few services holding "001", not ten thousand names.
//
// When every piece is common (a short search, or "ERP" in a team whose every name holds it), the
// matches are common too, and a walk of the team's names in id order meets a page of them early:
// that walk is the old way, kept for those searches. A search that no piece serves and whose
// matches are rare (two characters no name holds, or pieces each common but a whole that is
// rare) would walk all of the team's names as often as one cares to ask (10 to 20 ms at 10,000
// in the review of issue 37): so one search reads at most WALK_LIMIT names, and says where it
// stopped (`searchedTo`), from where the next search of the same words goes on.
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import { sql } from '../kysely-runtime.js';
import type { Database } from '../tables.js';
import { nameContains } from './name-search.js';

/** A piece held by at most this many of a team's services starts the search from its own rows. */
export const RARE_ENOUGH = 200;
/** Pieces of a long search weighed at most: any few distinctive pieces find the rare one. */
const PIECES_WEIGHED = 12;
/** Names one walk reads at most (about a millisecond's work); then it stops and says where. */
export const WALK_LIMIT = 1_000;

export interface NameSearch {
  teamId: string;
  search: string;
  /** Only services after this id (the page's cursor). */
  afterId?: string | undefined;
  /** Services never offered (those a form already shows as chosen). */
  excluding?: string[] | undefined;
  limit: number;
}

export interface NamedServices<Service> {
  services: Service[];
  /**
   * Set when a walk read WALK_LIMIT names before it found `limit` matches: the last id it read.
   * Services after it were not searched; the same search with it as `afterId` goes on.
   */
  searchedTo?: string | undefined;
}

/** Ids of the team's live services (no copy) whose name contains the search, in id order, at most `limit`. */
export async function serviceIdsNamed(db: Kysely<Database>, by: NameSearch): Promise<NamedServices<string>> {
  const found = await servicesNamed(db, by);
  return { ...found, services: found.services.map((service) => service.id) };
}

/** The same services with their names (read from the same index: a form shows them as they are). */
export async function servicesNamed(db: Kysely<Database>, by: NameSearch): Promise<NamedServices<{ id: string; name: string }>> {
  const rarest = await rarestPiece(db, by.teamId, by.search);
  let query = db.selectFrom('erp_services').select(['id', 'name'])
    .where('team_id', '=', by.teamId).where('parent_id', 'is', null).where('deleted_at', 'is', null);
  if (by.afterId !== undefined) query = query.where('id', '>', by.afterId);
  if (by.excluding && by.excluding.length > 0) query = query.where('id', 'not in', by.excluding);
  if (rarest === undefined) return by.search ? walkNames(db, query, by) : { services: await query.orderBy('id').limit(by.limit).execute() };
  if (rarest.count === 0) return { services: [] };
  const candidates = await db.selectFrom('service_name_grams').select('service_id')
    .where('team_id', '=', by.teamId).where('gram', '=', sql<string>`lower(${rarest.piece})`).execute();
  if (candidates.length === 0) return { services: [] };
  return {
    services: await query.where('id', 'in', candidates.map((row) => row.service_id)).where(nameContains(db, 'name', by.search))
      .orderBy('id').limit(by.limit).execute(),
  };
}

type TeamNames = SelectQueryBuilder<Database, 'erp_services', { id: string; name: string }>;

/**
 * The matches among the next WALK_LIMIT of the team's names (one range of erp_services_team_names,
 * as the search was before it had pieces), and, when they do not fill the page, where the walk
 * stopped if it did not reach the team's last name.
 */
async function walkNames(db: Kysely<Database>, names: TeamNames, by: NameSearch): Promise<NamedServices<{ id: string; name: string }>> {
  const walked = names.orderBy('id').limit(WALK_LIMIT).as('walked');
  const services = await db.selectFrom(walked).select(['id', 'name']).where(nameContains(db, 'name', by.search))
    .orderBy('id').limit(by.limit).execute();
  if (services.length === by.limit) return { services };
  const read = await db.selectFrom(walked).select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.max('id').as('last')])
    .executeTakeFirstOrThrow();
  return Number(read.count) < WALK_LIMIT ? { services } : { services, searchedTo: read.last as string };
}

/**
 * The search's piece held by the fewest of the team's services, if one is held by at most
 * RARE_ENOUGH; undefined when the search is shorter than a piece or every piece is common.
 */
async function rarestPiece(db: Kysely<Database>, teamId: string, search: string): Promise<{ piece: string; count: number } | undefined> {
  const pieces = piecesOf(search);
  if (pieces.length === 0) return undefined;
  // One statement for all: each count stops at RARE_ENOUGH + 1 rows of its range.
  const row = await db.selectNoFrom((eb) => pieces.map((piece, index) => eb.selectFrom(
    eb.selectFrom('service_name_grams').select(sql<number>`1`.as('one'))
      .where('team_id', '=', teamId).where('gram', '=', sql<string>`lower(${piece})`).limit(RARE_ENOUGH + 1).as('held'),
  ).select((inner) => inner.fn.countAll<number | string>().as('count')).as(`p${index}`))).executeTakeFirstOrThrow() as Record<string, number | string>;
  let rarest: { piece: string; count: number } | undefined;
  pieces.forEach((piece, index) => {
    const count = Number(row[`p${index}`]);
    if (count <= RARE_ENOUGH && (rarest === undefined || count < rarest.count)) rarest = { piece, count };
  });
  return rarest;
}

/** The search's distinct three-character pieces (by code point, as SQL's substr counts), at most PIECES_WEIGHED spread over it. */
export function piecesOf(search: string): string[] {
  const chars = Array.from(search);
  const all = [...new Set(chars.slice(0, -2).map((_, at) => chars.slice(at, at + 3).join('')))];
  if (all.length <= PIECES_WEIGHED) return all;
  return Array.from({ length: PIECES_WEIGHED }, (_, i) => all[Math.floor((i * all.length) / PIECES_WEIGHED)]!);
}

/**
 * Writes the pieces of the given services' names (or, with no ids, of every service that has
 * none), as schema.sql does when its statements run (schema.sql says when that is): for
 * services inserted after it, in their own transaction.
 */
export async function indexServiceNames(db: Kysely<Database> | Transaction<Database>, serviceIds?: string[]): Promise<void> {
  if (serviceIds !== undefined && serviceIds.length === 0) return;
  let services = db.selectFrom('erp_services as s')
    .innerJoin('name_positions as p', (join) => join.on('p.n', '<=', sql<number>`length(s.name) - 2`))
    .select(['s.team_id', sql<string>`lower(substr(s.name, p.n, 3))`.as('gram'), 's.id as service_id']);
  services = serviceIds === undefined
    ? services.where((eb) => eb.not(eb.exists(eb.selectFrom('service_name_grams as g').select('g.service_id').whereRef('g.service_id', '=', 's.id'))))
    : services.where('s.id', 'in', serviceIds);
  await db.insertInto('service_name_grams').columns(['team_id', 'gram', 'service_id']).expression(services)
    .onConflict((conflict) => conflict.doNothing()).execute();
}
