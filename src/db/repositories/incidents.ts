// Incidents and the emails about them (src/health/incidents.ts holds the rules).
import type { Kysely } from 'kysely';
import type { Database, IncidentKind, IncidentsTable } from '../tables.js';

/** The newest incident of `kind` about `subjectId` started at or after `since`, or one still open. */
export async function findRecentIncident(db: Kysely<Database>, subjectId: string, kind: IncidentKind, since: string) {
  return db.selectFrom('incidents').select(['id', 'started_at', 'ended_at'])
    .where('subject_id', '=', subjectId).where('kind', '=', kind)
    .where((eb) => eb.or([eb('started_at', '>=', since), eb('ended_at', 'is', null)]))
    .orderBy('started_at', 'desc').limit(1).executeTakeFirst();
}

export async function findOpenIncident(db: Kysely<Database>, subjectId: string, kind: IncidentKind) {
  return db.selectFrom('incidents').selectAll().where('subject_id', '=', subjectId).where('kind', '=', kind)
    .where('ended_at', 'is', null).executeTakeFirst();
}

export async function insertIncident(db: Kysely<Database>, incident: IncidentsTable): Promise<void> {
  await db.insertInto('incidents').values(incident).execute();
}

/** Ends the incident; false when it had already ended (another writer did). */
export async function endIncidentRow(db: Kysely<Database>, id: string, at: string): Promise<boolean> {
  const result = await db.updateTable('incidents').set({ ended_at: at }).where('id', '=', id).where('ended_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The team's owners and admins, with the kinds each chose (null: never chose). */
export async function listNotifiedMembers(db: Kysely<Database>, teamId: string) {
  return db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id')
    .leftJoin('member_notifications as n', (join) => join.onRef('n.team_id', '=', 'm.team_id').onRef('n.user_id', '=', 'm.user_id'))
    .select(['u.email', 'n.kinds']).where('m.team_id', '=', teamId).where('m.removed_at', 'is', null).where('m.role', 'in', ['owner', 'admin'])
    .orderBy('u.email').execute();
}

export async function insertNotificationEmails(
  db: Kysely<Database>, emails: { id: string; teamId: string; incidentId: string; phase: 'start' | 'end'; recipient: string; what: string; at: string }[],
): Promise<void> {
  if (emails.length === 0) return;
  await db.insertInto('notification_emails').values(emails.map((email) => ({
    id: email.id, team_id: email.teamId, incident_id: email.incidentId, phase: email.phase, recipient: email.recipient, what: email.what,
    state: 'pending' as const, attempts: 0, next_attempt_at: email.at, lease_owner: null, lease_expires_at: null, last_error: null,
    created_at: email.at, sent_at: null,
  }))).execute();
}

export async function findNotificationMail(db: Kysely<Database>) {
  return db.selectFrom('notification_mail').selectAll().where('id', '=', 'relay').executeTakeFirst();
}

export async function setNotificationMail(db: Kysely<Database>, relay: { host: string; port: number; from: string }, at: string): Promise<void> {
  await db.insertInto('notification_mail').values({ id: 'relay', relay_host: relay.host, relay_port: relay.port, from_address: relay.from, updated_at: at })
    .onConflict((conflict) => conflict.column('id').doUpdateSet({ relay_host: relay.host, relay_port: relay.port, from_address: relay.from, updated_at: at }))
    .execute();
}

/** Takes up to `limit` emails due at `now` for `owner` until `until`, each by a compare-and-set, so one node sends each. */
export async function claimDueEmails(db: Kysely<Database>, owner: string, now: string, until: string, limit: number) {
  const due = await db.selectFrom('notification_emails').select(['id', 'lease_expires_at']).where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now).where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
    .orderBy('next_attempt_at').limit(limit).execute();
  const taken: string[] = [];
  for (const row of due) {
    const result = await db.updateTable('notification_emails').set({ lease_owner: owner, lease_expires_at: until })
      .where('id', '=', row.id).where('state', '=', 'pending')
      .where((eb) => row.lease_expires_at === null ? eb('lease_expires_at', 'is', null) : eb('lease_expires_at', '=', row.lease_expires_at))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) taken.push(row.id);
  }
  if (taken.length === 0) return [];
  return db.selectFrom('notification_emails as e').innerJoin('incidents as i', 'i.id', 'e.incident_id')
    .select(['e.id', 'e.phase', 'e.recipient', 'e.what', 'e.attempts', 'e.created_at', 'i.kind', 'i.subject_type', 'i.subject_id', 'i.subject_name', 'i.started_at', 'i.ended_at'])
    .where('e.id', 'in', taken).orderBy('e.id').execute();
}

export async function endEmailAttempt(
  db: Kysely<Database>, id: string, outcome: { state: 'pending' | 'sent' | 'failed'; attempts: number; nextAttemptAt: string; error: string | null; at: string },
): Promise<void> {
  await db.updateTable('notification_emails').set({
    state: outcome.state, attempts: outcome.attempts, next_attempt_at: outcome.nextAttemptAt, last_error: outcome.error,
    lease_owner: null, lease_expires_at: null, sent_at: outcome.state === 'sent' ? outcome.at : null,
  }).where('id', '=', id).execute();
}

/** The kinds a member chose (comma-separated), or undefined when they never chose. */
export async function findMemberNotificationKinds(db: Kysely<Database>, teamId: string, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('member_notifications').select('kinds').where('team_id', '=', teamId).where('user_id', '=', userId).executeTakeFirst();
  return row?.kinds;
}

export async function setMemberNotificationKinds(db: Kysely<Database>, teamId: string, userId: string, kinds: readonly IncidentKind[], at: string): Promise<void> {
  const value = kinds.join(',');
  await db.insertInto('member_notifications').values({ team_id: teamId, user_id: userId, kinds: value, updated_at: at })
    .onConflict((conflict) => conflict.columns(['team_id', 'user_id']).doUpdateSet({ kinds: value, updated_at: at })).execute();
}
