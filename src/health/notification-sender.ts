// Sends the emails about incidents (written by incidents.ts) through the installation's relay
// (admin set-notification-mail), each taken with a lease so that one node sends it; a relay that
// refuses or does not answer is tried again later (1, 2, 4, 8 minutes), and an email that failed
// MAX_ATTEMPTS times is given up, saying why in its row. The text is made here: what happened,
// since when (and until when, for its end), and the link to the service's page on the panel.
import type { Kysely } from 'kysely';
import { claimDueEmails, endEmailAttempt, findNotificationMail } from '../db/repositories/incidents.js';
import type { Database, IncidentKind } from '../db/tables.js';
import { sendMail } from '../engine/erp-app/smtp-client.js';
import { OVERVIEW_PATH, SERVICE_PAGE_PATH } from '../panel/panel-paths.js';

const BATCH = 50;
const MAX_ATTEMPTS = 5;
const LEASE_MS = 60_000;

const TITLES: Record<IncidentKind, string> = {
  service_down: 'ERP service down',
  crash_loop: 'ERP service crash loop',
  server_unreachable: 'Server unreachable',
  backup_failed: 'Backup failed',
  certificate_failed: 'Certificate failed',
};

export interface SenderOptions {
  owner: string;
  now: number;
  /** The panel's address (TEAMINFRA_PUBLIC_URL, else where serve listens); null: the email names the page's path only. */
  panelUrl: string | null;
  timeoutMs: number;
}

/** Sends the emails that are due; how many were sent. */
export async function sendDueEmails(db: Kysely<Database>, options: SenderOptions): Promise<number> {
  const relay = await findNotificationMail(db);
  if (!relay) return 0;
  const at = new Date(options.now).toISOString();
  const due = await claimDueEmails(db, options.owner, at, new Date(options.now + LEASE_MS).toISOString(), BATCH);
  let sent = 0;
  for (const email of due) {
    try {
      await sendMail({ host: relay.relay_host, port: relay.relay_port, timeoutMs: options.timeoutMs }, {
        from: relay.from_address, to: email.recipient, ...textOf(email, options.panelUrl),
      });
      await endEmailAttempt(db, email.id, { state: 'sent', attempts: email.attempts + 1, nextAttemptAt: at, error: null, at });
      sent += 1;
    } catch (error) {
      const attempts = email.attempts + 1;
      const retryAt = new Date(options.now + 60_000 * 2 ** (attempts - 1)).toISOString();
      await endEmailAttempt(db, email.id, {
        state: attempts >= MAX_ATTEMPTS ? 'failed' : 'pending', attempts, nextAttemptAt: retryAt, at,
        error: error instanceof Error ? error.message.slice(0, 300) : 'the relay refused the email',
      });
    }
  }
  return sent;
}

type DueEmail = Awaited<ReturnType<typeof claimDueEmails>>[number];

function textOf(email: DueEmail, panelUrl: string | null): { subject: string; text: string } {
  const title = TITLES[email.kind];
  const path = email.subject_type === 'service' ? `${SERVICE_PAGE_PATH}/${email.subject_id}` : OVERVIEW_PATH;
  const link = `${panelUrl ?? ''}${path}`;
  const ended = email.phase === 'end';
  const lines = [
    email.what,
    '',
    `Since: ${email.started_at}`,
    ...(ended && email.ended_at ? [`Ended: ${email.ended_at}`] : []),
    `${email.subject_type === 'service' ? 'ERP service' : 'Server'}: ${email.subject_name} (${email.subject_id})`,
    '',
    `See it on the panel: ${link}`,
  ];
  return { subject: `${ended ? 'Resolved: ' : ''}${title}: ${email.subject_name}`, text: lines.join('\n') };
}
