// Incidents: what a team's owners and admins are emailed about, once when it starts and once when
// it ends, inside the transaction of the change that starts or ends it (so an email exists
// exactly when its incident does). A subject starts at most one incident of a kind an hour
// (FLAP_BOUND_MS): a service that flaps sends its events each time, but mails at most twice an
// hour. Emails are written only while the installation has a relay (admin set-notification-mail),
// to the owners and admins who chose the kind (notification-kinds.ts); the watcher sends them.
import type { Kysely } from 'kysely';
import { newId } from '../db/ids.js';
import {
  endIncidentRow, findNotificationMail, findOpenIncident, findRecentIncident, insertIncident, insertNotificationEmails, listNotifiedMembers,
} from '../db/repositories/incidents.js';
import type { Database, IncidentKind } from '../db/tables.js';
import { chosenKinds } from './notification-kinds.js';

export const FLAP_BOUND_MS = 3_600_000;

export interface IncidentSubject {
  teamId: string;
  type: 'service' | 'server';
  id: string;
  name: string;
}

/** The service an incident is about, as its subject; undefined once the service is gone. */
export async function serviceSubject(trx: Kysely<Database>, serviceId: string): Promise<IncidentSubject | undefined> {
  const service = await trx.selectFrom('erp_services').select(['team_id', 'name']).where('id', '=', serviceId).executeTakeFirst();
  return service && { teamId: service.team_id, type: 'service', id: serviceId, name: service.name };
}

/**
 * Starts an incident of `kind` about `subject` and writes its start emails; null (nothing
 * written) when one is open, or one started within the hour. `what` is the email's sentence.
 * `since`: when what it is about began (the first failed check), if before `at`.
 * `endsAtOnce`: a one-off (a backup failed), ended as it starts, with no end email.
 */
export async function startIncident(
  trx: Kysely<Database>, subject: IncidentSubject, kind: IncidentKind, what: string, at: string,
  options: { since?: string; endsAtOnce?: boolean } = {},
): Promise<string | null> {
  const hourAgo = new Date(Date.parse(at) - FLAP_BOUND_MS).toISOString();
  if (await findRecentIncident(trx, subject.id, kind, hourAgo)) return null;
  const id = newId('inc');
  await insertIncident(trx, {
    id, team_id: subject.teamId, kind, subject_type: subject.type, subject_id: subject.id, subject_name: subject.name,
    started_at: options.since ?? at, ended_at: options.endsAtOnce ? at : null,
  });
  await writeEmails(trx, subject.teamId, id, kind, 'start', what, at);
  return id;
}

/** Ends the open incident of `kind` about `subjectId`, if any, and writes its end emails. */
export async function endIncident(trx: Kysely<Database>, subjectId: string, kind: IncidentKind, what: string, at: string): Promise<boolean> {
  const open = await findOpenIncident(trx, subjectId, kind);
  if (!open || !(await endIncidentRow(trx, open.id, at))) return false;
  await writeEmails(trx, open.team_id, open.id, kind, 'end', what, at);
  return true;
}

async function writeEmails(
  trx: Kysely<Database>, teamId: string, incidentId: string, kind: IncidentKind, phase: 'start' | 'end', what: string, at: string,
): Promise<void> {
  if (!(await findNotificationMail(trx))) return;
  const members = await listNotifiedMembers(trx, teamId);
  await insertNotificationEmails(trx, members.filter((member) => chosenKinds(member.kinds).includes(kind)).map((member) => ({
    id: newId('ntf'), teamId, incidentId, phase, recipient: member.email, what, at,
  })));
}
