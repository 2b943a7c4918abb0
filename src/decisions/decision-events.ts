// The three decision events, written to the outbox in the caller's transaction (so an event
// exists exactly when its change does) and delivered signed and retried like every other.
import type { Kysely } from 'kysely';
import { insertEvent } from '../db/repositories/events.js';
import type { DecisionRow } from '../db/repositories/decisions.js';
import type { Database } from '../db/tables.js';
import { decisionView } from '../../tools/views.js';

export type DecisionEventType = 'decision.needed' | 'decision.answered' | 'decision.expired';

/** For an approval: which action waits, on what, asked by which token. */
export interface ApprovalAction {
  capability: string;
  title: string;
  operation_id: string;
  service_id: string | null;
  server_id: string | null;
  backup_id: string | null;
}

export async function writeDecisionEvent(
  trx: Kysely<Database>, type: DecisionEventType, decision: DecisionRow, at: string,
  extras: { askedByName?: string; action?: ApprovalAction | null } = {},
): Promise<void> {
  await insertEvent(trx, {
    teamId: decision.team_id, type, at,
    data: {
      decision: decisionView(decision),
      asked_by: { token_id: decision.asked_by_token_id, token_name: extras.askedByName ?? null, channel: decision.asked_channel },
      action: extras.action ?? null,
    },
  });
}
