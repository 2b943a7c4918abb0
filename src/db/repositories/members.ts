// Team members as the Members page manages them: roles, removal, invitations. The rules about
// who may do what live in src/panel/member-rules.ts; this file only reads and writes.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, Role } from '../tables.js';
import { nowIso } from '../ids.js';

export const INVITATION_DAYS = 7;
const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

export async function listMembers(db: Kysely<Database>, teamId: string) {
  return db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id as user_id', 'u.email', 'u.last_sign_in_at', 'm.role', 'm.created_at'])
    .where('m.team_id', '=', teamId).where('m.removed_at', 'is', null).orderBy('u.email').execute();
}

export async function countOwners(db: Kysely<Database>, teamId: string): Promise<number> {
  const row = await db.selectFrom('memberships').select(db.fn.countAll<number>().as('count'))
    .where('team_id', '=', teamId).where('role', '=', 'owner').where('removed_at', 'is', null).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function setRole(db: Kysely<Database>, teamId: string, userId: string, role: Role): Promise<void> {
  await db.updateTable('memberships').set({ role }).where('team_id', '=', teamId).where('user_id', '=', userId).execute();
}

/** Marks the membership removed (tokens they made keep naming them) and ends their sessions in this team. */
export async function removeMember(db: Kysely<Database>, teamId: string, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('memberships').set({ removed_at: nowIso() }).where('team_id', '=', teamId).where('user_id', '=', userId).execute();
    await trx.deleteFrom('panel_sessions').where('user_id', '=', userId).where('team_id', '=', teamId).execute();
  });
}

export async function createInvitation(
  db: Kysely<Database>, values: { teamId: string; email: string; role: Role; invitedBy: string },
): Promise<string> {
  const value = randomBytes(24).toString('base64url');
  const now = Date.now();
  await db.insertInto('invitations').values({
    id_hash: hashOf(value), team_id: values.teamId, email: values.email.toLowerCase(), role: values.role,
    invited_by_user_id: values.invitedBy, created_at: new Date(now).toISOString(),
    expires_at: new Date(now + INVITATION_DAYS * 86_400_000).toISOString(), accepted_at: null,
  }).execute();
  return value;
}

export async function findOpenInvitation(db: Kysely<Database>, value: string) {
  const row = await db.selectFrom('invitations as i').innerJoin('teams as t', 't.id', 'i.team_id')
    .select(['i.id_hash', 'i.team_id', 'i.email', 'i.role', 'i.expires_at', 'i.accepted_at', 't.name as team_name'])
    .where('i.id_hash', '=', hashOf(value)).executeTakeFirst();
  if (!row || row.accepted_at !== null || row.expires_at <= nowIso()) return undefined;
  return row;
}

export async function markInvitationAccepted(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.updateTable('invitations').set({ accepted_at: nowIso() }).where('id_hash', '=', idHash).execute();
}

export async function listOpenInvitations(db: Kysely<Database>, teamId: string) {
  return db.selectFrom('invitations').select(['email', 'role', 'expires_at', 'created_at'])
    .where('team_id', '=', teamId).where('accepted_at', 'is', null).where('expires_at', '>', nowIso())
    .orderBy('created_at', 'desc').execute();
}
