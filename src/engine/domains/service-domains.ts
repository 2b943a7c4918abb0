// The names a service answers at (service_domains): listed for get_erp_service, added and
// removed by its team (add_service_domain, remove_service_domain), its certificate's state
// written back as the proxy reports it. A name is one service's in the whole installation.
import type { Kysely } from 'kysely';
import { AppError } from '../../core/errors.js';
import { nowIso } from '../../db/ids.js';
import type { CertificateState, Database } from '../../db/tables.js';

export interface DomainView {
  domain: string;
  certificate: { state: CertificateState; expires_at: string | null; reason: string | null };
}

/** Custom domains a service may have: enough for a shop's names, never a list that grows unchecked. */
export const MAX_CUSTOM_DOMAINS = 20;

/**
 * Why a name is still pending while its service runs: it runs behind its own port, and the
 * proxy serves it from its next start or redeploy (docker/service-start.ts), not at once.
 */
export const SERVED_FROM_NEXT_START = 'The service still answers at its own port: this name is served, and its certificate asked for, from the service\'s next start or redeploy.';

/** The platform name first, then the team's domains by name. */
export async function listServiceDomains(db: Kysely<Database>, serviceId: string): Promise<DomainView[]> {
  const rows = await db.selectFrom('service_domains')
    .select(['domain', 'kind', 'certificate_state', 'certificate_expires_at', 'certificate_reason'])
    .where('service_id', '=', serviceId).orderBy('kind', 'desc').orderBy('domain').execute();
  const service = await db.selectFrom('erp_services').select(['state', 'proxy_upstream']).where('id', '=', serviceId).executeTakeFirst();
  const notYetProxied = service?.state === 'running' && service.proxy_upstream === null;
  return rows.map((row) => ({
    domain: row.domain,
    certificate: {
      state: row.certificate_state, expires_at: row.certificate_expires_at,
      reason: row.certificate_state === 'pending' && notYetProxied ? SERVED_FROM_NEXT_START : row.certificate_reason,
    },
  }));
}

/** Adds `domain` (checked, ASCII) to the service; 409 when any other service has it, or it is under a server's base domain. */
export async function addServiceDomain(db: Kysely<Database>, serviceId: string, domain: string): Promise<DomainView[]> {
  const bases = await db.selectFrom('docker_servers').select('base_domain').where('base_domain', 'is not', null).execute();
  const under = bases.find((row) => domain === row.base_domain || domain.endsWith(`.${row.base_domain}`));
  if (under) throw new AppError('conflict', `${domain} is under ${under.base_domain}, where teaminfra gives services their platform names; add a domain of your own.`);
  const held = await db.selectFrom('service_domains').select(['service_id']).where('domain', '=', domain).executeTakeFirst();
  if (held && held.service_id !== serviceId) throw new AppError('conflict', `${domain} is already used by another service.`);
  if (!held && !(await onDockerServer(db, serviceId))) {
    throw new AppError('conflict', 'The service runs on a server of local processes, which has no proxy to serve a domain: domains are for services on Docker servers.');
  }
  if (!held) {
    const count = await db.selectFrom('service_domains').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('service_id', '=', serviceId).where('kind', '=', 'custom').executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_CUSTOM_DOMAINS) throw new AppError('conflict', `A service can have at most ${MAX_CUSTOM_DOMAINS} domains of its own; remove one first.`);
    const now = nowIso();
    const inserted = await db.insertInto('service_domains')
      .values({ domain, service_id: serviceId, kind: 'custom', certificate_state: 'pending', certificate_expires_at: null, certificate_reason: null, created_at: now, updated_at: now })
      .onConflict((conflict) => conflict.column('domain').doNothing()).executeTakeFirst();
    // Another request took it between the look and the insert.
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) throw new AppError('conflict', `${domain} is already used by another service.`);
  }
  return listServiceDomains(db, serviceId);
}

/** Whether the service's server is a Docker engine, the only kind with a proxy (docker/proxy/). */
async function onDockerServer(db: Kysely<Database>, serviceId: string): Promise<boolean> {
  const row = await db.selectFrom('erp_services as s').innerJoin('docker_servers as d', 'd.server_id', 's.server_id')
    .select('d.server_id').where('s.id', '=', serviceId).executeTakeFirst();
  return row !== undefined;
}

/** Removes one of the team's domains from the service; the platform name cannot be removed. */
export async function removeServiceDomain(db: Kysely<Database>, serviceId: string, domain: string): Promise<DomainView[]> {
  const row = await db.selectFrom('service_domains').select(['kind']).where('domain', '=', domain).where('service_id', '=', serviceId).executeTakeFirst();
  if (!row) throw new AppError('not_found', `The service has no domain ${domain}.`);
  if (row.kind === 'platform') throw new AppError('conflict', `${domain} is the service's platform name; it goes with the service.`);
  await db.deleteFrom('service_domains').where('domain', '=', domain).where('service_id', '=', serviceId).execute();
  return listServiceDomains(db, serviceId);
}

/** Frees every name of a deleted service. */
export async function removeAllServiceDomains(db: Kysely<Database>, serviceId: string): Promise<void> {
  await db.deleteFrom('service_domains').where('service_id', '=', serviceId).execute();
}

export async function setCertificateState(
  db: Kysely<Database>, domain: string, state: { state: CertificateState; expiresAt: string | null; reason: string | null },
): Promise<void> {
  await db.updateTable('service_domains')
    .set({ certificate_state: state.state, certificate_expires_at: state.expiresAt, certificate_reason: state.reason, updated_at: nowIso() })
    .where('domain', '=', domain).execute();
}
