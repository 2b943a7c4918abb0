// A service's certificates and its "certificate failed" incident: started when one of its names
// gets no certificate (certificate.failed) or its renewal has not succeeded 14 days before the
// end (certificate.expiring), ended once a certificate is issued and none of its names is failed
// any more. One incident per service, whatever the number of its names: a team adding five names
// before pointing their DNS gets one email, not five.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { endIncident, serviceSubject, startIncident } from './incidents.js';

export async function settleCertificateIncident(
  trx: Kysely<Database>, change: { serviceId: string; domain: string; event: 'certificate.issued' | 'certificate.failed' | 'certificate.expiring'; reason: string | null }, at: string,
): Promise<void> {
  const subject = await serviceSubject(trx, change.serviceId);
  if (!subject) return;
  const named = `ERP service "${subject.name}"`;
  if (change.event === 'certificate.issued') {
    const failed = await trx.selectFrom('service_domains').select('domain').where('service_id', '=', change.serviceId)
      .where('certificate_state', '=', 'failed').limit(1).executeTakeFirst();
    if (!failed) await endIncident(trx, change.serviceId, 'certificate_failed', `Every name of ${named} has its certificate again.`, at);
    return;
  }
  const what = change.event === 'certificate.failed'
    ? `The certificate for ${change.domain} (${named}) could not be obtained: ${change.reason ?? 'the CA gave no reason.'}`
    : `The certificate for ${change.domain} (${named}) has not been renewed: ${change.reason ?? 'no reason given.'}`;
  await startIncident(trx, subject, 'certificate_failed', what, at);
}
