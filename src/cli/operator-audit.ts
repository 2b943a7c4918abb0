// The audit row of an operator command: the team's activity trail shows what the operator did
// from the command line beside what tokens and members did.
import type { Kysely } from 'kysely';
import { auditStamp } from '../core/audit.js';
import type { Database } from '../db/tables.js';

export async function operatorAudit(db: Kysely<Database>, teamId: string, action: string, targetType: string, targetId: string) {
  await db.insertInto('audit_log').values({
    ...auditStamp(), team_id: teamId, actor_type: 'operator', actor_id: null, channel: 'cli', action,
    target_type: targetType, target_id: targetId, outcome: 'allowed', code: null, detail: null,
  }).execute();
}
