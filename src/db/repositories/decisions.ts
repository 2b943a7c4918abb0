// Decisions, as the API and the panel read and write them. Reach is applied in SQL: a token
// reaches a decision of its team that it asked itself, or that is about no service, or about a
// service it reaches (the same rule as for the service itself).
import type { ExpressionBuilder, Kysely } from 'kysely';
import { sql } from '../kysely-runtime.js';
import type { Reach } from '../../core/principal.js';
import type { Database, DecisionRequestsTable, DecisionState, DecisionsTable } from '../tables.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { nowIso } from '../ids.js';
import { unindexed, listReachedServiceIds, mergeById } from './reach-ranges.js';
import { serviceInListedReach } from './service-reach.js';

export type DecisionRow = DecisionsTable;

function decisionReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { d: Database['decisions'] }, 'd'>) => {
    const ofTeam = eb('d.team_id', '=', reach.teamId);
    if (!reach.restrictServices) return ofTeam;
    return eb.and([ofTeam, eb.or([eb('d.asked_by_token_id', '=', reach.tokenId), serviceInListedReach(eb, 'd.service_id', reach.tokenId)])]);
  };
}

export async function findReachableDecision(db: Kysely<Database>, reach: Reach, decisionId: string): Promise<DecisionRow | undefined> {
  return db.selectFrom('decisions as d').selectAll('d').where(decisionReachable(reach)).where('d.id', '=', decisionId).executeTakeFirst();
}

/**
 * A page of the decisions `reach` reaches, in id order. For a token limited to services, the
 * union of three ranges (reach-ranges.ts): the decisions it asked (decisions_asker), those about
 * no service and those about the services it reaches (decisions_team_service). The state is the
 * state as read (src/decisions/decision-state.ts): a pending decision past its expiry is expired.
 */
export async function listReachableDecisions(db: Kysely<Database>, reach: Reach, page: PageRequest, state?: DecisionState, now = nowIso()) {
  const after = decodeCursor(page.cursor);
  // In the reached services' range the state is compared through unindexed(): SQLite would
  // otherwise read all the team's decisions in that state.
  const range = (stateByIndex = true) => {
    const column = stateByIndex ? sql.ref<string>('d.state') : unindexed('d.state');
    let query = db.selectFrom('decisions as d').selectAll('d').where('d.team_id', '=', reach.teamId);
    if (state === 'pending') query = query.where(column, '=', 'pending').where('d.expires_at', '>', now);
    else if (state === 'expired') {
      query = query.where((eb) => eb.or([eb(column, '=', 'expired'), eb.and([eb(column, '=', 'pending'), eb('d.expires_at', '<=', now)])]));
    } else if (state) query = query.where(column, '=', state);
    if (after) query = query.where('d.id', '>', after);
    return query;
  };
  const take = <Q extends ReturnType<typeof range>>(query: Q) => query.orderBy('d.id').limit(page.limit + 1).execute();
  if (!reach.restrictServices) return take(range());
  const reachedServiceIds = await listReachedServiceIds(db, reach.tokenId);
  const ranges = await Promise.all([
    take(range().where('d.asked_by_token_id', '=', reach.tokenId)),
    take(range().where('d.service_id', 'is', null)),
    reachedServiceIds.length === 0 ? [] : range(false).where('d.service_id', 'in', reachedServiceIds)
      .orderBy(unindexed('d.id')).limit(page.limit + 1).execute(),
  ]);
  return mergeById(ranges, page.limit + 1);
}

export async function findDecision(db: Kysely<Database>, decisionId: string): Promise<DecisionRow | undefined> {
  return db.selectFrom('decisions').selectAll().where('id', '=', decisionId).executeTakeFirst();
}

/**
 * The team's decisions for the panel: pending first (oldest first), then the others, the most
 * recently ended first (answered or cancelled at answered_at, expired at expires_at), so that a
 * decision asked long ago and answered just now heads the history.
 */
export async function listTeamDecisions(db: Kysely<Database>, teamId: string, historyLimit: number) {
  const [pending, history] = await Promise.all([
    db.selectFrom('decisions').selectAll().where('team_id', '=', teamId).where('state', '=', 'pending').orderBy('id').execute(),
    db.selectFrom('decisions').selectAll().where('team_id', '=', teamId).where('state', '!=', 'pending')
      .orderBy((eb) => eb.fn.coalesce('answered_at', 'expires_at'), 'desc').orderBy('id', 'desc').limit(historyLimit).execute(),
  ]);
  return { pending, history };
}

/** Pending decisions that can still be answered: one past its expiry counts as ended even before the sweeper closes it. */
export async function countPendingDecisions(db: Kysely<Database>, teamId: string, now: string): Promise<number> {
  const row = await db.selectFrom('decisions').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('team_id', '=', teamId).where('state', '=', 'pending').where('expires_at', '>', now).executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function insertDecision(db: Kysely<Database>, row: DecisionRow): Promise<void> {
  await db.insertInto('decisions').values(row).execute();
}

/** What an earlier request_decision with this token's Idempotency-Key asked, if any. */
export async function findDecisionRequest(db: Kysely<Database>, tokenId: string, key: string) {
  return db.selectFrom('decision_requests').select(['request_fingerprint', 'decision_id'])
    .where('asked_by_token_id', '=', tokenId).where('idempotency_key', '=', key).executeTakeFirst();
}

export async function insertDecisionRequest(db: Kysely<Database>, row: DecisionRequestsTable): Promise<void> {
  await db.insertInto('decision_requests').values(row).execute();
}

/**
 * Moves a pending decision to its end state, only if it is still pending and (for an answer or a
 * cancellation) not yet past its expiry: of two answers racing, exactly one wins.
 */
export async function closeDecision(
  db: Kysely<Database>, decisionId: string,
  change: Pick<DecisionRow, 'state' | 'answer' | 'answered_by_type' | 'answered_by_id' | 'answered_channel' | 'answered_at'>,
  notExpiredAt: string | null,
): Promise<boolean> {
  let query = db.updateTable('decisions').set(change).where('id', '=', decisionId).where('state', '=', 'pending');
  if (notExpiredAt) query = query.where('expires_at', '>', notExpiredAt);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Pending decisions whose expiry has passed, oldest first: for the sweeper. */
export async function listOverdueDecisions(db: Kysely<Database>, now: string, limit: number): Promise<DecisionRow[]> {
  return db.selectFrom('decisions').selectAll().where('state', '=', 'pending').where('expires_at', '<=', now)
    .orderBy('id').limit(limit).execute();
}
