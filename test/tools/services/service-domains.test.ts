// A service's own domains over REST (add_service_domain, remove_service_domain, the `domains`
// of get_erp_service): checked names in their ASCII form, 409 for a name another service of any
// team uses or one under a server's base domain, 403 without services:write, and the platform
// name listed first and kept when the team's domains come and go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../../src/db/ids.js';
import { ensurePlatformDomain } from '../../../src/engine/domains/platform-name.js';
import { SERVED_FROM_NEXT_START } from '../../../src/engine/domains/service-domains.js';
import { updateService } from '../../../src/engine/state-changes.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../support/fixtures.js';
import { send } from '../../engine/support/engine-http.js';

describe('add_service_domain and remove_service_domain', () => {
  let server: TestServer;
  let team: SeededTeam;
  let other: SeededTeam;
  let token: string;
  let otherToken: string;
  let local: SeededTeam;
  let localToken: string;
  const domains = (serviceId: string) => `/api/service-erp/${serviceId}/domains`;

  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    other = await seedTeam(server.app, { name: 'Other team' });
    token = (await makeToken(server.app, team.teamId)).value;
    otherToken = (await makeToken(server.app, other.teamId)).value;
    local = await seedTeam(server.app, { name: 'Local team' });
    localToken = (await makeToken(server.app, local.teamId)).value;
    const db = server.app.db.kysely;
    // Domains are for services on Docker servers; the local team's servers stay servers of local processes.
    for (const serverId of [...team.serverIds, ...other.serverIds]) {
      await db.insertInto('docker_servers').values({
        server_id: serverId, docker_host: 'unix:///var/run/docker.sock', image: null, created_at: nowIso(), memory_mb: null,
        cpu_millicores: null, base_domain: serverId === team.serverIds[0] ? 'apps.example.com' : null, proxy_http_port: null, proxy_https_port: null,
      }).execute();
    }
    const service = await db.selectFrom('erp_services').select(['id', 'name', 'server_id']).where('id', '=', team.serviceIds[0]).executeTakeFirstOrThrow();
    expect(await ensurePlatformDomain(db, service)).toBe('erp-a.apps.example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('adds a domain in its ASCII form, pending a certificate, after the platform name', async () => {
    const added = await send(server.baseUrl, 'POST', domains(team.serviceIds[0]), token, { domain: 'Bücher.Example.org.' });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({
      service_id: team.serviceIds[0],
      domains: [
        { domain: 'erp-a.apps.example.com', certificate: { state: 'pending', expires_at: null, reason: null } },
        { domain: 'xn--bcher-kva.example.org', certificate: { state: 'pending', expires_at: null, reason: null } },
      ],
    });
    const shown = await send(server.baseUrl, 'GET', `/api/service-erp/${team.serviceIds[0]}`, token);
    expect((shown.body as { domains: { domain: string }[] }).domains.map((entry) => entry.domain)).toEqual(['erp-a.apps.example.com', 'xn--bcher-kva.example.org']);
    // The same name again, on the same service: nothing changes.
    expect((await send(server.baseUrl, 'POST', domains(team.serviceIds[0]), token, { domain: 'xn--bcher-kva.example.org' })).status).toBe(200);
  });

  it('answers 409 when another service, of any team, uses the name, or it is under a base domain', async () => {
    const taken = await send(server.baseUrl, 'POST', domains(other.serviceIds[0]), otherToken, { domain: 'bücher.example.org' });
    expect(taken.status).toBe(409);
    expect((taken.body as { detail: string }).detail).toBe('xn--bcher-kva.example.org is already used by another service.');
    expect((await send(server.baseUrl, 'POST', domains(team.serviceIds[1]), token, { domain: 'xn--bcher-kva.example.org' })).status).toBe(409);
    const platform = await send(server.baseUrl, 'POST', domains(other.serviceIds[0]), otherToken, { domain: 'erp-a.apps.example.com' });
    expect(platform.status).toBe(409);
    expect((platform.body as { detail: string }).detail).toMatch(/under apps\.example\.com/);
  });

  it('refuses a domain for a service on a server of local processes, which has no proxy, with a sentence', async () => {
    const refused = await send(server.baseUrl, 'POST', domains(local.serviceIds[0]), localToken, { domain: 'local.example.org' });
    expect(refused.status).toBe(409);
    expect((refused.body as { detail: string }).detail).toBe(
      'The service runs on a server of local processes, which has no proxy to serve a domain: domains are for services on Docker servers.');
    const shown = await send(server.baseUrl, 'GET', `/api/service-erp/${local.serviceIds[0]}`, localToken);
    expect((shown.body as { domains: unknown[] }).domains).toEqual([]);
  });

  it('says why a name of a running service still at its own port is pending: it is served from the next start or redeploy', async () => {
    const db = server.app.db.kysely;
    const shown = async () => (await send(server.baseUrl, 'GET', `/api/service-erp/${team.serviceIds[0]}`, token)).body as { domains: { certificate: { reason: string | null } }[] };
    await db.updateTable('erp_services').set({ state: 'running', proxy_upstream: null }).where('id', '=', team.serviceIds[0]).execute();
    expect((await shown()).domains.map((entry) => entry.certificate.reason)).toEqual([SERVED_FROM_NEXT_START, SERVED_FROM_NEXT_START]);
    await db.updateTable('erp_services').set({ proxy_upstream: 'teaminfra-web:8069' }).where('id', '=', team.serviceIds[0]).execute();
    expect((await shown()).domains.map((entry) => entry.certificate.reason)).toEqual([null, null]);
    await db.updateTable('erp_services').set({ state: 'stopped', proxy_upstream: null }).where('id', '=', team.serviceIds[0]).execute();
    expect((await shown()).domains.map((entry) => entry.certificate.reason)).toEqual([null, null]);
  });

  it('refuses a wildcard, a single label, an IP address and a bad label with a sentence', async () => {
    for (const [domain, words] of [['*.example.org', 'wildcard'], ['intranet', 'single label'], ['192.0.2.1', 'IP address'],
      ['-bad.example.org', 'label "-bad"'], [`${'a'.repeat(64)}.example.org`, 'not 1 to 63']] as const) {
      const refused = await send(server.baseUrl, 'POST', domains(team.serviceIds[0]), token, { domain });
      expect(refused.status, domain).toBe(400);
      expect((refused.body as { detail: string }).detail).toContain(words);
    }
  });

  it('answers 404 for a service out of reach and 403 without services:write', async () => {
    expect((await send(server.baseUrl, 'POST', domains(team.serviceIds[0]), otherToken, { domain: 'shop.example.net' })).status).toBe(404);
    const reader = (await makeToken(server.app, team.teamId, { permissions: ['services:read'] })).value;
    const refused = await send(server.baseUrl, 'POST', domains(team.serviceIds[0]), reader, { domain: 'shop.example.net' });
    expect(refused.status).toBe(403);
    expect((refused.body as { detail: string }).detail).toBe('This API token does not have the services:write scope.');
  });

  it('removes a domain of the team, never the platform name, and frees it for another service', async () => {
    const platform = await send(server.baseUrl, 'DELETE', `${domains(team.serviceIds[0])}/erp-a.apps.example.com`, token);
    expect(platform.status).toBe(409);
    const removed = await send(server.baseUrl, 'DELETE', `${domains(team.serviceIds[0])}/xn--bcher-kva.example.org`, token);
    expect(removed.status).toBe(200);
    expect((removed.body as { domains: unknown[] }).domains).toHaveLength(1);
    expect((await send(server.baseUrl, 'DELETE', `${domains(team.serviceIds[0])}/xn--bcher-kva.example.org`, token)).status).toBe(404);
    expect((await send(server.baseUrl, 'POST', domains(other.serviceIds[0]), otherToken, { domain: 'bücher.example.org' })).status).toBe(200);
  });

  it('frees the names of a deleted service for another service', async () => {
    expect((await send(server.baseUrl, 'POST', domains(team.serviceIds[1]), token, { domain: 'leaving.example.org' })).status).toBe(200);
    // What the delete operation does at its end (src/engine/state-changes.ts), in its transaction.
    await updateService(server.app.db.kysely, team.serviceIds[1], { state: 'deleting', deleted: true }, nowIso());
    expect((await send(server.baseUrl, 'POST', domains(other.serviceIds[0]), otherToken, { domain: 'leaving.example.org' })).status).toBe(200);
  });
});
