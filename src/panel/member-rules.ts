// Who may change whom. A team always keeps an owner; an admin cannot remove or demote an owner;
// nobody raises anyone (themselves included) above their own role.
import type { Role } from '../db/tables.js';
import { PanelRefusal } from './session-guard.js';

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

export interface MemberChange {
  actorRole: Role;
  actorUserId: string;
  targetUserId: string;
  targetRole: Role;
  /** The new role, or null for removal. */
  newRole: Role | null;
  ownerCount: number;
}

export function checkMemberChange(change: MemberChange): void {
  const refuse = (sentence: string) => { throw new PanelRefusal(403, 'Not allowed', sentence); };
  if (change.targetRole === 'owner' && change.actorRole !== 'owner') {
    refuse(change.newRole === null ? 'Only an owner can remove an owner.' : 'Only an owner can change the role of an owner.');
  }
  if (change.newRole !== null && RANK[change.newRole] > RANK[change.actorRole]) {
    refuse(`You are ${change.actorRole === 'admin' ? 'an admin' : 'a member'}: you cannot give a role above your own.`);
  }
  const losesOwner = change.targetRole === 'owner' && change.newRole !== 'owner';
  if (losesOwner && change.ownerCount <= 1) {
    refuse('A team always keeps at least one owner. Make another member an owner first.');
  }
}

export function checkInvitationRole(actorRole: Role, role: Role): void {
  if (RANK[role] > RANK[actorRole]) {
    throw new PanelRefusal(403, 'Not allowed', `You cannot invite someone as ${role}: that is above your own role.`);
  }
}
