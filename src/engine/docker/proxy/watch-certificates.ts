// One look at a server's proxy for its names' certificates: what it stores and what the CA said
// since the last look (certificate-readings.ts), turned into each name's state and the team's
// events (src/engine/domains/certificate-state.ts). A refusal becomes a reason from where the
// name points, asked of TEAMINFRA_DNS_SERVER, against where the server's base domain points.
// Called on an interval for each Docker server with a proxy; answers when the next look starts.
import type { Resolver } from 'node:dns/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/tables.js';
import { certificateChanges, recordCertificateChanges, serverDomainRows } from '../../domains/certificate-state.js';
import { addressesOf, certificateFailureReason } from '../../domains/name-lookup.js';
import type { DockerApi } from '../docker-api.js';
import { readCertificateVerdicts, readStoredCertificates } from './certificate-readings.js';

export async function watchCertificates(
  db: Kysely<Database>, api: DockerApi, proxyContainer: string, serverId: string, options: { sinceMs: number; resolver: Resolver; now?: number },
): Promise<{ nextSinceMs: number; changed: number }> {
  const now = options.now ?? Date.now();
  const rows = await serverDomainRows(db, serverId);
  if (rows.length === 0) return { nextSinceMs: now, changed: 0 };
  const [stored, verdicts] = await Promise.all([
    readStoredCertificates(api, proxyContainer), readCertificateVerdicts(api, proxyContainer, options.sinceMs),
  ]);
  const server = await db.selectFrom('docker_servers').select('base_domain').where('server_id', '=', serverId).executeTakeFirst();
  let serverAddresses: Promise<string[]> | undefined;
  const explain = async (domain: string, caError: string) => {
    serverAddresses ??= server?.base_domain ? addressesOf(options.resolver, server.base_domain) : Promise.resolve([]);
    return certificateFailureReason(caError, await addressesOf(options.resolver, domain), await serverAddresses);
  };
  const changes = await certificateChanges(rows, { stored, verdicts }, now, explain);
  await recordCertificateChanges(db, changes);
  // A verdict logged in the second this look began is read again next time, never missed.
  return { nextSinceMs: now - 1_000, changed: changes.length };
}
