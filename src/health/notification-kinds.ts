// The kinds of incident a team's owners and admins can be emailed about, each chosen per member on
// the panel (Notifications page); a member who never chose gets the defaults, every kind there is.
import type { IncidentKind } from '../db/tables.js';

export const NOTIFICATION_KINDS: readonly { kind: IncidentKind; label: string }[] = [
  { kind: 'service_down', label: 'An ERP service is down (it fails its health check, or it failed)' },
  { kind: 'crash_loop', label: 'An ERP service restarts in a loop' },
  { kind: 'server_unreachable', label: 'A server\'s engine does not answer' },
  { kind: 'backup_failed', label: 'A backup failed' },
  { kind: 'certificate_failed', label: 'A certificate for a service\'s name could not be obtained or renewed' },
];

export const DEFAULT_NOTIFICATION_KINDS: readonly IncidentKind[] = ['service_down', 'crash_loop', 'server_unreachable', 'backup_failed', 'certificate_failed'];

export function isNotificationKind(value: string): value is IncidentKind {
  return NOTIFICATION_KINDS.some((entry) => entry.kind === value);
}

/** A member's stored choice (comma-separated), or the defaults when there is none. */
export function chosenKinds(stored: string | null | undefined): IncidentKind[] {
  if (stored === null || stored === undefined) return [...DEFAULT_NOTIFICATION_KINDS];
  return stored.split(',').filter(isNotificationKind);
}
