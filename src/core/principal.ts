// Who is calling, once the token has been checked. Built by src/auth, consumed by invoke().
// Capability handlers never get this; they get a Reach (what the token can see) instead.
import type { PermissionId } from '../auth/permissions.js';
import type { AcceptedBy, Plan, TokenSource } from '../db/tables.js';

export type Channel = 'api' | 'mcp';

/** What a token can reach: its team, optionally narrowed to listed services and servers. */
export interface Reach {
  teamId: string;
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

export function holds(principal: Principal, permission: PermissionId): boolean {
  return principal.fullAccess || principal.permissions.has(permission);
}

export function accepts(acceptedBy: AcceptedBy, channel: Channel): boolean {
  return acceptedBy === 'both' || acceptedBy === channel;
}

export const PLANS_WITH_API: ReadonlySet<Plan> = new Set(['starter', 'business', 'enterprise']);
