// The activity trail: the team's audit rows (every action and denial, from every channel), newest
// first. Each page is read from one index range chosen by the most selective filter given (a
// service, then a token, then an action, then an outcome, else the team), walked in id order;
// the other filters are checked on the rows of that range through unindexed(), so that the
// planner cannot trade the range for another index and a sort. A time range bounds the id itself:
// ids start with their millisecond (ids.ts), so every range above is also a range of time.
// test/db/query-plans.test.ts holds each shape's plan on a million rows.
//
// A token limited to services or servers sees only entries whose target is a service or server it
// is limited to (its listed services and their copies, its listed servers): one range of
// audit_log_target per reached thing, each read up to the page and merged. Entries about the team
// as a whole (tokens created, members added, sign-ins) are about none of them (docs/activity.md).
import type { Kysely } from 'kysely';
import type { Reach } from '../../core/principal.js';
import { fastPathFor, type Placeholder } from '../connect.js';
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

/** What an entry's action can be: a tool name, a panel action, or an MCP method refused before its body was read (tools/list). */
export const ACTION_NAME = /^[a-z][a-z0-9_/.-]{0,99}$/;

export const ACTIVITY_COLUMNS = [
  'a.id', 'a.at', 'a.actor_type', 'a.actor_id', 'a.channel', 'a.action', 'a.target_type', 'a.target_id', 'a.outcome', 'a.code',
  't.name as token_name', 't.source as token_source', 'u.email as user_email',
] as const;

/** The smallest audit id minted at or after `iso` (ids.ts: prefix, 9 base36 digits of milliseconds, then more). */
export function auditIdAt(iso: string): string {
  return `aud_${Date.parse(iso).toString(36).padStart(9, '0')}`;
}

type Target = { type: 'service' | 'server'; id: string };

/** Which filters and bounds a range has: one prepared statement per shape (prepared-queries.ts). */
interface Shape { target: Target['type'] | undefined; token: boolean; action: boolean; outcome: boolean; upper: boolean; lower: boolean }

function buildRange(db: Kysely<Database>, shape: Shape, value: Placeholder) {
  let query = db.selectFrom('audit_log as a')
    .leftJoin('api_tokens as t', (join) => join.on('a.actor_type', '=', 'token').onRef('t.id', '=', 'a.actor_id'))
    .leftJoin('users as u', (join) => join.on('a.actor_type', '=', 'user').onRef('u.id', '=', 'a.actor_id'))
    .select(ACTIVITY_COLUMNS)
    .where('a.team_id', '=', value('teamId'));
  // The driving equality: the target's, else the first filter given, on the column its index
  // starts with; the others through unindexed().
  let driven = false;
  if (shape.target) {
    query = query.where('a.target_type', '=', shape.target).where('a.target_id', '=', value('targetId'));
    driven = true;
  }
  const equal = (column: 'a.actor_id' | 'a.action' | 'a.outcome', name: string) => {
    query = driven ? query.where(unindexed(column), '=', value(name)) : query.where(column, '=', value(name));
    driven = true;
  };
  if (shape.token) equal('a.actor_id', 'tokenId');
  if (shape.action) equal('a.action', 'action');
  if (shape.outcome) equal('a.outcome', 'outcome');
  if (shape.upper) query = query.where('a.id', '<', value('upper'));
  if (shape.lower) query = query.where('a.id', '>=', value('lower'));
  return query.orderBy('a.id', 'desc').limit(value<number>('limit'));
}

export async function listActivity(db: Kysely<Database>, reach: Reach, filters: ActivityFilters, page: PageRequest) {
  const before = decodeCursor(page.cursor);
  const until = filters.until === undefined ? undefined : auditIdAt(filters.until);
  const upper = before !== undefined && (until === undefined || before < until) ? before : until;
  const fast = fastPathFor(db);
  const range = async (target?: Target) => {
    const shape: Shape = {
      target: target?.type, token: filters.tokenId !== undefined, action: filters.action !== undefined,
      outcome: filters.outcome !== undefined, upper: upper !== undefined, lower: filters.since !== undefined,
    };
    const values: Record<string, unknown> = {
      teamId: reach.teamId, targetId: target?.id, tokenId: filters.tokenId, action: filters.action, outcome: filters.outcome,
      upper, lower: filters.since === undefined ? undefined : auditIdAt(filters.since), limit: page.limit + 1,
    };
    if (fast) {
      const key = `activity:${shape.target ?? '-'}:${[shape.token, shape.action, shape.outcome, shape.upper, shape.lower].map(Number).join('')}`;
      return fast.query(key, (kysely, value) => buildRange(kysely, shape, value)).all(values);
    }
    return buildRange(db, shape, (<T>(name: string) => values[name] as T) as Placeholder).execute();
  };

  const restricted = reach.restrictServices || reach.restrictServers;
  // A service given, or the reach's targets, drive the ranges: those are few and short, where
  // the token's own range may be most of the team's history.
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

export type ActivityRow = Awaited<ReturnType<ReturnType<typeof buildRange>['execute']>>[number];

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
