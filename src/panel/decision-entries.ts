// What the Decisions page shows of each decision beyond its row: who asked (token name and
// channel), who answered (a member's email or a token's name), the service it is about, and for
// an approval the action that waits, on what, and its operation. A pending decision past its
// expiry is shown as expired even before the sweeper has closed it, since it can no longer be
// answered (answerDecision refuses it).
import type { Kysely } from 'kysely';
import { listTeamDecisions, type DecisionRow } from '../db/repositories/decisions.js';
import type { Database, DecisionState } from '../db/tables.js';
import { APPROVABLE_ACTION_TITLES, isApprovableAction } from '../decisions/approvable.js';
import { decisionStateAt } from '../decisions/decision-state.js';

/** How many ended decisions the page lists (newest first). */
export const HISTORY_LIMIT = 50;

export interface ApprovalEntry {
  capability: string;
  title: string;
  target: string;
  operationId: string;
  operationState: string | null;
  operationReason: string | null;
}

export interface DecisionEntry {
  row: DecisionRow;
  /** The state a person should see: "expired" for a pending decision past its expiry. */
  shownState: DecisionState;
  options: string[] | null;
  askedBy: { name: string; channel: string };
  answeredBy: string | null;
  serviceName: string | null;
  approval: ApprovalEntry | null;
}

export async function teamDecisionEntries(db: Kysely<Database>, teamId: string, now: string) {
  const { pending, history } = await listTeamDecisions(db, teamId, HISTORY_LIMIT);
  const open = pending.filter((row) => row.expires_at > now);
  const overdue = pending.filter((row) => row.expires_at <= now);
  // The most recently ended first: answered or cancelled at answered_at, expired at expires_at.
  const endedAt = (row: DecisionRow) => row.answered_at ?? row.expires_at;
  const ended = [...overdue, ...history]
    .sort((a, b) => descending(endedAt(a), endedAt(b)) || descending(a.id, b.id)).slice(0, HISTORY_LIMIT);
  const describe = await describer(db, teamId, [...open, ...ended], now);
  return { pending: open.map(describe), history: ended.map(describe) };
}

/** For sort(): the greater string first (ISO times and ids compare as plain strings). */
function descending(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

/** Loads the names the rows refer to, in one query per table, and returns the row → entry mapping. */
async function describer(db: Kysely<Database>, teamId: string, rows: DecisionRow[], now: string) {
  const operationIds = unique(rows.map((row) => row.operation_id));
  const operations = await byId(operationIds, (ids) => db.selectFrom('operations')
    .select(['id', 'state', 'reason', 'service_id', 'server_id', 'parameters']).where('team_id', '=', teamId).where('id', 'in', ids).execute());
  const tokenIds = unique(rows.flatMap((row) => [row.asked_by_token_id, row.answered_by_type === 'token' ? row.answered_by_id : null]));
  const userIds = unique(rows.map((row) => (row.answered_by_type === 'member' ? row.answered_by_id : null)));
  const serviceIds = unique([...rows.map((row) => row.service_id), ...[...operations.values()].map((operation) => operation.service_id)]);
  const serverIds = unique([...operations.values()].map((operation) => operation.server_id));
  const [tokens, users, services, servers] = await Promise.all([
    byId(tokenIds, (ids) => db.selectFrom('api_tokens').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', ids).execute()),
    byId(userIds, (ids) => db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids).execute()),
    byId(serviceIds, (ids) => db.selectFrom('erp_services').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', ids).execute()),
    byId(serverIds, (ids) => db.selectFrom('servers').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', ids).execute()),
  ]);
  const serviceName = (id: string | null) => (id ? services.get(id)?.name ?? id : null);

  const approvalOf = (row: DecisionRow): ApprovalEntry | null => {
    if (!row.operation_id) return null;
    const operation = operations.get(row.operation_id);
    const parameters = operation ? (JSON.parse(operation.parameters) as { approval?: { capability?: string }; backup_id?: string }) : {};
    const capability = parameters.approval?.capability ?? 'unknown action';
    const target = [
      parameters.backup_id ? `backup ${parameters.backup_id}${operation?.service_id ? ' into' : ''}` : null,
      operation?.service_id ? `ERP service ${serviceName(operation.service_id)}` : null,
      !operation?.service_id && operation?.server_id ? `server ${servers.get(operation.server_id)?.name ?? operation.server_id}` : null,
    ].filter(Boolean).join(' ');
    return {
      capability, title: isApprovableAction(capability) ? APPROVABLE_ACTION_TITLES[capability] : capability, target: target || 'the team',
      operationId: row.operation_id, operationState: operation?.state ?? null, operationReason: operation?.reason ?? null,
    };
  };

  return (row: DecisionRow): DecisionEntry => ({
    row,
    shownState: decisionStateAt(row, now),
    options: row.options === null ? null : (JSON.parse(row.options) as string[]),
    askedBy: { name: tokens.get(row.asked_by_token_id)?.name ?? row.asked_by_token_id, channel: row.asked_channel },
    answeredBy: row.answered_by_id === null ? null
      : row.answered_by_type === 'member' ? users.get(row.answered_by_id)?.email ?? 'a former member'
        : `API token "${tokens.get(row.answered_by_id)?.name ?? row.answered_by_id}"`,
    serviceName: serviceName(row.service_id),
    approval: approvalOf(row),
  });
}

function unique(values: (string | null)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== null))];
}

async function byId<Row extends { id: string }>(ids: string[], load: (ids: string[]) => Promise<Row[]>): Promise<Map<string, Row>> {
  if (ids.length === 0) return new Map();
  return new Map((await load(ids)).map((row) => [row.id, row]));
}
