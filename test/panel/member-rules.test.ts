import { describe, expect, it } from 'vitest';
import { checkInvitationRole, checkMemberChange, type MemberChange } from '../../src/panel/member-rules.js';

const change = (overrides: Partial<MemberChange>): MemberChange => ({
  actorRole: 'owner', actorUserId: 'usr_a', targetUserId: 'usr_b', targetRole: 'member', newRole: 'admin', ownerCount: 2, ...overrides,
});

describe('member rules', () => {
  it('lets an owner promote a member to owner', () => {
    expect(() => checkMemberChange(change({ newRole: 'owner' }))).not.toThrow();
  });

  it('refuses to demote or remove the last owner, even by that owner', () => {
    expect(() => checkMemberChange(change({ targetRole: 'owner', targetUserId: 'usr_a', newRole: 'admin', ownerCount: 1 }))).toThrow(/at least one owner/);
    expect(() => checkMemberChange(change({ targetRole: 'owner', newRole: null, ownerCount: 1 }))).toThrow(/at least one owner/);
    expect(() => checkMemberChange(change({ targetRole: 'owner', newRole: 'admin', ownerCount: 2 }))).not.toThrow();
  });

  it('refuses an admin removing or demoting an owner', () => {
    expect(() => checkMemberChange(change({ actorRole: 'admin', targetRole: 'owner', newRole: null }))).toThrow('Only an owner can remove an owner.');
    expect(() => checkMemberChange(change({ actorRole: 'admin', targetRole: 'owner', newRole: 'member' }))).toThrow('Only an owner can change the role of an owner.');
  });

  it('refuses anyone raising anyone, themselves included, above their own role', () => {
    expect(() => checkMemberChange(change({ actorRole: 'admin', targetUserId: 'usr_a', targetRole: 'admin', newRole: 'owner' }))).toThrow(/above your own/);
    expect(() => checkMemberChange(change({ actorRole: 'admin', newRole: 'admin' }))).not.toThrow();
    expect(() => checkInvitationRole('admin', 'owner')).toThrow(/above your own role/);
    expect(() => checkInvitationRole('owner', 'owner')).not.toThrow();
  });
});
