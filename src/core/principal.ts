// Who is calling, once the token has been checked. Built by src/auth, consumed by invoke().
// Capability handlers never get this; they get a Reach (what the token can see) instead.
import type { PermissionId } from '../auth/permissions.js';
import type { AcceptedBy, Plan, Role, TokenSource } from '../db/tables.js';

/** Where a call comes from: a token's channels (REST and MCP), or the panel, where a member acts. */
export type Channel = 'api' | 'mcp' | 'panel';

/** What a token can reach: its team, optionally narrowed to listed services and servers. */
export interface Reach {
  teamId: string;
  /**
   * The token's id; '' for a member in the panel (MemberPrincipal), whom no token's lists or
   * requests name: a member's reach is never restricted nor narrowed, so it is never read then.
   */
  tokenId: string;
  restrictServices: boolean;
  restrictServers: boolean;
  /**
   * Only what this token requested itself (its operations): set by invoke() when a token without
   * the permission calls a capability open to requesters (`readableByRequester`).
   */
  requestedOnly?: boolean;
}

export interface Principal {
  tokenId: string;
  tokenName: string;
  source: TokenSource;
  teamId: string;
  teamName: string;
  plan: Plan;
  timezone: string;
  acceptedBy: AcceptedBy;
  expiresOn: string | null;
  fullAccess: boolean;
  /** Chosen permissions with implications applied. */
  permissions: ReadonlySet<PermissionId>;
  reach: Reach;
  /** Capabilities this token may only ask for: each waits for someone else's approval (src/decisions/approvals.ts). */
  needsApproval: ReadonlySet<string>;
}

/**
 * A member of a team signed in to the panel, acting through invoke() with the permissions of
 * their role (src/panel/member-principal.ts, written down in docs/panel.md): the same gate as a
 * token, recorded in the activity trail with the member as its actor. Never restricted to
 * services or servers, never waiting for approval (that is a token's setting).
 */
export interface MemberPrincipal {
  member: { userId: string; role: Role };
  teamId: string;
  teamName: string;
  fullAccess: boolean;
  /** The role's permissions with implications applied. */
  permissions: ReadonlySet<PermissionId>;
  reach: Reach;
}

/** Whoever invoke() lets through: a token, or a member in the panel. */
export type Caller = Principal | MemberPrincipal;

export function isMember(caller: Caller): caller is MemberPrincipal {
  return 'member' in caller;
}

export function holds(principal: Pick<Caller, 'fullAccess' | 'permissions'>, permission: PermissionId): boolean {
  return principal.fullAccess || principal.permissions.has(permission);
}

export function accepts(acceptedBy: AcceptedBy, channel: Channel): boolean {
  return acceptedBy === 'both' || acceptedBy === channel;
}

export const PLANS_WITH_API: ReadonlySet<Plan> = new Set(['starter', 'business', 'enterprise']);
