// A service's platform name, `<slug>.<base domain>`: the slug is made from the service's name
// once (the first time the service gets a platform name) and kept in its service_domains row,
// so it stays the same across stop, start, redeploy and restore, and is unique on its server
// (a second "Shop" gets shop-2). A new base domain (admin set-server-domain) keeps the slugs.
import type { Kysely } from 'kysely';
import { nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';

const SLUG_MAX = 40;

/** `Café Shop (EU)` -> `cafe-shop-eu`; a name with nothing usable gives `service`. */
export function nameSlug(name: string): string {
  const slug = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, SLUG_MAX).replace(/-+$/, '');
  return slug || 'service';
}

export function platformName(slug: string, baseDomain: string): string {
  return `${slug}.${baseDomain}`;
}

/**
 * The service's platform name under the base domain of `server_id` (the server it runs on, or
 * is moving to), assigned now if it has none, and moved under that base domain, slug kept when
 * free, if it was made under another server's (a move). Null while that server has no base
 * domain (a platform name of another server's is then dropped: it cannot be served there).
 * Call it when the proxy's routes are built.
 */
export async function ensurePlatformDomain(db: Kysely<Database>, service: { id: string; name: string; server_id: string }): Promise<string | null> {
  const server = await db.selectFrom('docker_servers').select('base_domain').where('server_id', '=', service.server_id).executeTakeFirst();
  const existing = await db.selectFrom('service_domains').select('domain').where('service_id', '=', service.id).where('kind', '=', 'platform').executeTakeFirst();
  if (existing && server?.base_domain && existing.domain.endsWith(`.${server.base_domain}`)) return existing.domain;
  if (existing) await db.deleteFrom('service_domains').where('domain', '=', existing.domain).execute();
  if (!server?.base_domain) return null;
  const base = existing ? existing.domain.slice(0, existing.domain.indexOf('.')) : nameSlug(service.name);
  for (let attempt = 1; ; attempt++) {
    const domain = platformName(attempt === 1 ? base : `${base.slice(0, SLUG_MAX - 4)}-${attempt}`, server.base_domain);
    const now = nowIso();
    const inserted = await db.insertInto('service_domains')
      .values({ domain, service_id: service.id, kind: 'platform', certificate_state: 'pending', certificate_expires_at: null, certificate_reason: null, created_at: now, updated_at: now })
      .onConflict((conflict) => conflict.column('domain').doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return domain;
  }
}

/** A new base domain for the server: its services' platform names move under it, slugs kept. */
export async function moveServerPlatformNames(db: Kysely<Database>, serverId: string, baseDomain: string): Promise<void> {
  const rows = await db.selectFrom('service_domains as d').innerJoin('erp_services as s', 's.id', 'd.service_id')
    .select(['d.domain']).where('s.server_id', '=', serverId).where('d.kind', '=', 'platform').execute();
  for (const row of rows) {
    const slug = row.domain.split('.')[0]!;
    await db.updateTable('service_domains').set({ domain: platformName(slug, baseDomain), certificate_state: 'pending', certificate_expires_at: null, certificate_reason: null, updated_at: nowIso() })
      .where('domain', '=', row.domain).execute();
  }
}
