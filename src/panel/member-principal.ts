// What a member signed in to the panel may do to the team's services: the permissions of their
// role, the same identifiers as a token's (docs/panel.md has the table). The panel's actions go
// through invoke() with these, so a member is refused exactly what a token without them is, and
// each action and refusal is recorded with the member as its actor.
import { expandPermissions, type PermissionId } from '../auth/permissions.js';
import type { Capability } from '../core/capability.js';
import { mayAttempt, type Credentials } from '../core/invoke.js';
import { holds, type MemberPrincipal } from '../core/principal.js';
import type { Role } from '../db/tables.js';
import type { TeamSession } from './session-guard.js';

/**
 * Owners and admins hold every permission. A member reads and operates (start, stop, redeploy,
 * back up now) and answers decisions, but does not create, copy or delete services, download or
 * restore backups, read caught mail or logs (they can hold reset links and personal data), or
 * read the activity trail.
 */
export const ROLE_PERMISSIONS: Record<Role, 'full access' | readonly PermissionId[]> = {
  owner: 'full access',
  admin: 'full access',
  member: ['services:read', 'services:operate', 'servers:read', 'backups:read', 'backups:create', 'decisions:answer'],
};

export function memberPrincipal(session: TeamSession): MemberPrincipal {
  const granted = ROLE_PERMISSIONS[session.team.role];
  return {
    member: { userId: session.userId, role: session.team.role },
    teamId: session.team.id,
    teamName: session.team.name,
    fullAccess: granted === 'full access',
    permissions: granted === 'full access' ? new Set() : expandPermissions(granted),
    reach: { teamId: session.team.id, tokenId: '', restrictServices: false, restrictServers: false },
  };
}

/** What invoke() is given for a member's call: no token, the panel's channel. */
export function memberCredentials(session: TeamSession): Credentials {
  return { bearer: undefined, channel: 'panel', member: memberPrincipal(session) };
}

/** Whether the member's role includes `permission` (what a page shows them besides actions: logs, caught mail). */
export function roleHolds(session: TeamSession, permission: PermissionId): boolean {
  return holds(memberPrincipal(session), permission);
}

/** Whether the member's role lets them try `capability`: a button they may press is shown. Not a gate: invoke() is. */
export function roleAllows(session: TeamSession, capability: Capability): boolean {
  return mayAttempt(memberPrincipal(session), capability);
}
