// Each name's certificate state, moved on by what the proxy reports (its stored certificates
// and the CA's verdicts, src/engine/docker/proxy/certificate-readings.ts), and the events a
// team gets: certificate.issued when a name gets its first certificate (or one after a failure),
// certificate.failed when the CA refused it (with a reason saying what to fix; once per failure,
// not at every retry), certificate.expiring once when a certificate is 14 days from its end and
// its renewal has not succeeded. A renewal that succeeds is quiet: the new expiry is recorded.
import type { Kysely } from 'kysely';
import { insertEvent } from '../../db/repositories/events.js';
import type { CertificateState, Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import { settleCertificateIncident } from '../../health/certificate-incidents.js';
import { inWriteTransaction } from '../write-transaction.js';
import { setCertificateState } from './service-domains.js';

export const EXPIRING_WITHIN_MS = 14 * 24 * 60 * 60 * 1000;

export interface DomainCertificateRow {
  domain: string;
  service_id: string;
  team_id: string;
  certificate_state: CertificateState;
  certificate_expires_at: string | null;
  certificate_reason: string | null;
}

export interface ProxyReport {
  /** Certificates the proxy holds, by name. */
  stored: ReadonlyMap<string, { expiresAt: string }>;
  /** The CA's verdicts since the last report, oldest first. */
  verdicts: readonly { name: string; ok: boolean; error: string | null }[];
}

export type CertificateEventType = 'certificate.issued' | 'certificate.failed' | 'certificate.expiring';

export interface CertificateChange {
  row: DomainCertificateRow;
  state: CertificateState;
  expiresAt: string | null;
  reason: string | null;
  event: CertificateEventType | null;
}

/** `explain`: the sentence a CA's refusal becomes for the team (name-lookup.ts). */
export async function certificateChanges(
  rows: readonly DomainCertificateRow[], report: ProxyReport, now: number, explain: (domain: string, caError: string) => Promise<string>,
): Promise<CertificateChange[]> {
  const changes: CertificateChange[] = [];
  for (const row of rows) {
    const stored = report.stored.get(row.domain);
    const held = stored && Date.parse(stored.expiresAt) > now ? stored : undefined;
    const last = report.verdicts.filter((verdict) => verdict.name === row.domain).at(-1);
    if (held) {
      if (row.certificate_state !== 'issued' || row.certificate_expires_at !== held.expiresAt) {
        changes.push({ row, state: 'issued', expiresAt: held.expiresAt, reason: null, event: row.certificate_state === 'issued' ? null : 'certificate.issued' });
      } else if (Date.parse(held.expiresAt) - now < EXPIRING_WITHIN_MS && row.certificate_reason === null) {
        const why = last && !last.ok && last.error ? ` ${await explain(row.domain, last.error)}` : '';
        changes.push({ row, state: 'issued', expiresAt: held.expiresAt, reason: `Its renewal has not succeeded yet; it expires at ${held.expiresAt}.${why}`, event: 'certificate.expiring' });
      }
    } else if (last && !last.ok) {
      const reason = await explain(row.domain, last.error ?? 'no reason given');
      if (row.certificate_state !== 'failed' || row.certificate_reason !== reason) {
        changes.push({ row, state: 'failed', expiresAt: null, reason, event: row.certificate_state === 'failed' ? null : 'certificate.failed' });
      }
    }
  }
  return changes;
}

/** Each change and its event in one transaction: an event exists exactly when its change does. */
export async function recordCertificateChanges(db: Kysely<Database>, changes: readonly CertificateChange[]): Promise<void> {
  for (const change of changes) {
    await inWriteTransaction(db, async (trx) => {
      await setCertificateState(trx, change.row.domain, { state: change.state, expiresAt: change.expiresAt, reason: change.reason });
      if (change.event) {
        await insertEvent(trx, {
          teamId: change.row.team_id, type: change.event,
          data: { service_id: change.row.service_id, domain: change.row.domain, certificate: { state: change.state, expires_at: change.expiresAt, reason: change.reason } },
        });
        await settleCertificateIncident(trx, { serviceId: change.row.service_id, domain: change.row.domain, event: change.event, reason: change.reason }, nowIso());
      }
    });
  }
}

/** The names of a server's services, with their team, for a report from that server's proxy. */
export async function serverDomainRows(db: Kysely<Database>, serverId: string): Promise<DomainCertificateRow[]> {
  return db.selectFrom('service_domains as d').innerJoin('erp_services as s', 's.id', 'd.service_id')
    .select(['d.domain', 'd.service_id', 's.team_id', 'd.certificate_state', 'd.certificate_expires_at', 'd.certificate_reason'])
    .where('s.server_id', '=', serverId).where('s.deleted_at', 'is', null).execute();
}
