// Decisions, as the API and the panel read and write them. Reach is applied in SQL: a token
// reaches a decision of its team that it asked itself, or that is about no service, or about a
// service it reaches (the same rule as for the service itself).
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Reach } from '../../core/principal.js';
import type { Database, DecisionRequestsTable, DecisionState, DecisionsTable } from '../tables.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { nowIso } from '../ids.js';
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

export async function listReachableDecisions(db: Kysely<Database>, reach: Reach, page: PageRequest, state?: DecisionState, now = nowIso()) {
  const after = decodeCursor(page.cursor);
  let query = db.selectFrom('decisions as d').selectAll('d').where(decisionReachable(reach));
  // The state as read (src/decisions/decision-state.ts): a pending decision past its expiry is expired.
  if (state === 'pending') query = query.where('d.state', '=', 'pending').where('d.expires_at', '>', now);
  else if (state === 'expired') query = query.where((eb) => eb.or([eb('d.state', '=', 'expired'), eb.and([eb('d.state', '=', 'pending'), eb('d.expires_at', '<=', now)])]));
  else if (state) query = query.where('d.state', '=', state);
  if (after) query = query.where('d.id', '>', after);
  return query.orderBy('d.id').limit(page.limit + 1).execute();
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
