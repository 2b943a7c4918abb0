// Panel sessions: the cookie holds a random value; the database holds only its SHA-256.
// A session is valid only while its user is still an active member of the session's team.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, Role } from '../tables.js';
import { nowIso } from '../ids.js';

export const SESSION_HOURS = 12;

const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

export async function createSession(db: Kysely<Database>, userId: string, teamId: string | null): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  const now = Date.now();
  await db.insertInto('panel_sessions').values({
    id_hash: hashOf(value), user_id: userId, team_id: teamId, csrf_secret: randomBytes(24).toString('base64url'),
    created_at: new Date(now).toISOString(), expires_at: new Date(now + SESSION_HOURS * 3600_000).toISOString(),
  }).execute();
  return value;
}

export interface PanelSession {
  idHash: string;
  userId: string;
  email: string;
  csrfSecret: string;
  /** The chosen team and the user's role in it; null until a team is picked. */
  team: { id: string; name: string; role: Role; timezone: string } | null;
}

export async function findSession(db: Kysely<Database>, value: string): Promise<PanelSession | undefined> {
  const row = await db.selectFrom('panel_sessions as s').innerJoin('users as u', 'u.id', 's.user_id')
    .leftJoin('teams as t', 't.id', 's.team_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.team_id', '=', 's.team_id').onRef('m.user_id', '=', 's.user_id'))
    .select(['s.id_hash', 's.user_id', 's.csrf_secret', 's.team_id', 's.expires_at', 'u.email', 't.name as team_name',
      't.timezone', 'm.role', 'm.removed_at'])
    .where('s.id_hash', '=', hashOf(value)).executeTakeFirst();
  if (!row || row.expires_at <= nowIso()) return undefined;
  // A member removed from the team loses the session at once.
  if (row.team_id !== null && (row.role === null || row.removed_at !== null)) return undefined;
  return {
    idHash: row.id_hash, userId: row.user_id, email: row.email, csrfSecret: row.csrf_secret,
    team: row.team_id !== null && row.role
      ? { id: row.team_id, name: row.team_name as string, role: row.role, timezone: row.timezone as string }
      : null,
  };
}

export async function setSessionTeam(db: Kysely<Database>, idHash: string, teamId: string): Promise<void> {
  await db.updateTable('panel_sessions').set({ team_id: teamId }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('panel_sessions').where('id_hash', '=', idHash).execute();
}

/** Ends the session a cookie value names, valid or not (a browser signing in again leaves none behind). */
export async function deleteSessionOfCookie(db: Kysely<Database>, value: string): Promise<void> {
  await deleteSession(db, hashOf(value));
}

export async function activeTeamsOf(db: Kysely<Database>, userId: string) {
  return db.selectFrom('memberships as m').innerJoin('teams as t', 't.id', 'm.team_id')
    .select(['t.id', 't.name', 'm.role']).where('m.user_id', '=', userId).where('m.removed_at', 'is', null)
    .orderBy('t.name').execute();
}
