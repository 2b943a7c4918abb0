// The activity trail: the team's audit rows (every action and denial, from every channel), newest
// first. Each page is read from one index range chosen by the most selective filter given (token,
// then service, then action, then outcome, else the team), walked in id order; the other filters
// are checked on the rows of that range through unindexed(), so that the planner cannot trade
// the range for another index and a sort. A time range bounds the id itself: ids start with their
// millisecond (ids.ts), so every range above is also a range of time.
//
// A token limited to services or servers sees only entries whose target is a service or server it
// is limited to (its listed services and their copies, its listed servers): one range of
// audit_log_target per reached thing, each read up to the page and merged. Team-wide entries
// (tokens created, members added, services created on no listed server) are not about any of them.
import type { Kysely } from 'kysely';
import type { Reach } from '../../core/principal.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import type { Database } from '../tables.js';
import { listReachedServiceIds, unindexed } from './reach-ranges.js';

export interface ActivityFilters {
  tokenId?: string | undefined;
  serviceId?: string | undefined;
  action?: string | undefined;
  outcome?: 'allowed' | 'denied' | 'failed' | undefined;
  /** Inclusive, ISO 8601. */
  since?: string | undefined;
  /** Exclusive, ISO 8601. */
  until?: string | undefined;
}

export const ACTIVITY_COLUMNS = [
  'a.id', 'a.at', 'a.actor_type', 'a.actor_id', 'a.channel', 'a.action', 'a.target_type', 'a.target_id', 'a.outcome', 'a.code',
  't.name as token_name', 't.source as token_source', 'u.email as user_email',
] as const;

/** The smallest audit id minted at or after `iso` (ids.ts: prefix, 9 base36 digits of milliseconds, then more). */
export function auditIdAt(iso: string): string {
  return `aud_${Date.parse(iso).toString(36).padStart(9, '0')}`;
}

type Target = { type: 'service' | 'server'; id: string };

export async function listActivity(db: Kysely<Database>, reach: Reach, filters: ActivityFilters, page: PageRequest) {
  const before = decodeCursor(page.cursor);
  const range = (target?: Target) => {
    let query = db.selectFrom('audit_log as a')
      .leftJoin('api_tokens as t', (join) => join.on('a.actor_type', '=', 'token').onRef('t.id', '=', 'a.actor_id'))
      .leftJoin('users as u', (join) => join.on('a.actor_type', '=', 'user').onRef('u.id', '=', 'a.actor_id'))
      .select(ACTIVITY_COLUMNS)
      .where('a.team_id', '=', reach.teamId);
    // The driving equality: the first of these given, compared on the column its index starts with.
    let driven = false;
    const equal = (column: 'a.actor_id' | 'a.action' | 'a.outcome', value: string) => {
      query = driven ? query.where(unindexed(column), '=', value) : query.where(column, '=', value);
      driven = true;
    };
    if (filters.tokenId !== undefined && !target) equal('a.actor_id', filters.tokenId);
    if (target) {
      query = query.where('a.target_type', '=', target.type).where('a.target_id', '=', target.id);
      driven = true;
      if (filters.tokenId !== undefined) query = query.where(unindexed('a.actor_id'), '=', filters.tokenId);
    }
    if (filters.action !== undefined) equal('a.action', filters.action);
    if (filters.outcome !== undefined) equal('a.outcome', filters.outcome);
    const upper = before !== undefined && (filters.until === undefined || before < auditIdAt(filters.until)) ? before : undefined;
    if (upper !== undefined) query = query.where('a.id', '<', upper);
    else if (filters.until !== undefined) query = query.where('a.id', '<', auditIdAt(filters.until));
    if (filters.since !== undefined) query = query.where('a.id', '>=', auditIdAt(filters.since));
    return query.orderBy('a.id', 'desc').limit(page.limit + 1).execute();
  };

  const restricted = reach.restrictServices || reach.restrictServers;
  // A token given as filter is the driving range unless the reach (or a service) names targets:
  // those ranges are few and short, the token's own may be the whole team's history.
  if (filters.serviceId !== undefined) return range({ type: 'service', id: filters.serviceId });
  if (!restricted) return range();
  const targets: Target[] = [];
  if (reach.restrictServices) {
    for (const id of await listReachedServiceIds(db, reach.tokenId)) targets.push({ type: 'service', id });
  }
  if (reach.restrictServers) {
    const servers = await db.selectFrom('api_token_servers').select('server_id').where('token_id', '=', reach.tokenId).execute();
    for (const row of servers) targets.push({ type: 'server', id: row.server_id });
  }
  const ranges = await Promise.all(targets.map((target) => range(target)));
  return newestFirst(ranges, page.limit + 1);
}

export type ActivityRow = Awaited<ReturnType<typeof listActivity>>[number];

/** The first `count` rows of several ranges, each newest first, without repeats. */
function newestFirst<Row extends { id: string }>(ranges: Row[][], count: number): Row[] {
  const merged = new Map(ranges.flat().map((row) => [row.id, row]));
  return [...merged.values()].sort((a, b) => (a.id > b.id ? -1 : a.id < b.id ? 1 : 0)).slice(0, count);
}

/** The team's tokens the panel's Activity page offers as a filter, newest first; bounded, as every panel list is. */
export async function listTokensToFilterBy(db: Kysely<Database>, teamId: string, limit: number) {
  return db.selectFrom('api_tokens').select(['id', 'name', 'revoked_at']).where('team_id', '=', teamId)
    .orderBy('id', 'desc').limit(limit).execute();
}
