// Panel actions in the audit log: who (a user), what, when, through the panel.
import type { App } from '../app.js';

export function panelAudit(
  app: App,
  entry: {
    teamId: string | null; userId: string | null; action: string; outcome: 'allowed' | 'denied'; targetId?: string;
    /** What targetId names; a token unless said otherwise (the first panel writes were all about tokens). */
    targetType?: 'token' | 'decision' | 'member'; code?: string; detail?: string;
  },
): void {
  app.audit.record({
    team_id: entry.teamId, actor_type: entry.userId ? 'user' : 'anonymous', actor_id: entry.userId, channel: 'panel',
    action: entry.action, target_type: entry.targetId ? entry.targetType ?? 'token' : null, target_id: entry.targetId ?? null,
    outcome: entry.outcome, code: entry.code ?? null, detail: entry.detail ?? null,
  });
}
