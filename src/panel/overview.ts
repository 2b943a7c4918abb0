// The overview: how many decisions wait for an answer, the unhealthy ERP services first (since
// when), how many of the team's ERP services are in each state, then a page of its ERP services (with their copies, or those whose name matches a
// search) and a page of its servers. Every read is bounded by the page, so the page costs the same
// for a team of 20 services and one of 10,000.
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { countPendingDecisions } from '../db/repositories/decisions.js';
import { searchTerm } from '../db/repositories/name-search.js';
import { WALK_LIMIT } from '../db/repositories/service-name-search.js';
import {
  copiesOfServices, countServicesByState, listServersPage, listTopLevelServicesPage, listUnhealthyServices, type OverviewService,
} from '../db/repositories/service-overview.js';
import { nowIso } from '../db/ids.js';
import { backupSchedulePath } from './backup-schedule-page.js';
import { DECISIONS_PATH } from './decisions-page.js';
import { SERVICE_PAGE_PATH } from './service-page.js';
import { html, type Html } from './html.js';
import { page, sendPage } from './layout.js';
import { requireTeamSession } from './session-guard.js';
import { roleAllows } from './member-principal.js';
import { NEW_SERVICE_PATH } from './new-service-page.js';
import createErpService from '../../tools/services/create-erp-service.js';
import { NEW_SERVER_PATH } from './new-server-page.js';
import createServer from '../../tools/servers/create-server.js';

export const OVERVIEW_PAGE_SIZE = 50;
const SERVERS_PAGE_SIZE = 50;
/** Unhealthy services shown above the rest, longest unhealthy first. */
const UNHEALTHY_SHOWN = 50;
/** Copies shown under each service; the rest are counted, so a service with 500 copies stays one screen. */
const COPIES_SHOWN = 10;
const ID = /^[a-z]+_[0-9a-z]{20}$/;

type OverviewQuery = { q?: string; after?: string; servers_after?: string };

/** An id from the address bar, or nothing: a cursor someone edited starts the list again. */
const cursorId = (value: unknown): string | undefined => (typeof value === 'string' && ID.test(value) ? value : undefined);

export function registerOverview(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  server.get<{ Querystring: OverviewQuery }>('/panel', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const teamId = session.team.id;
    const search = searchTerm(request.query.q);
    const after = cursorId(request.query.after);
    const serversAfter = cursorId(request.query.servers_after);
    const [pendingDecisions, unhealthyRows, counts, { services: serviceRows, searchedTo }, serverRows] = await Promise.all([
      countPendingDecisions(db, teamId, nowIso()),
      listUnhealthyServices(db, teamId, UNHEALTHY_SHOWN),
      countServicesByState(db, teamId),
      listTopLevelServicesPage(db, teamId, { afterId: after, search, limit: OVERVIEW_PAGE_SIZE }),
      listServersPage(db, teamId, { afterId: serversAfter, limit: SERVERS_PAGE_SIZE }),
    ]);
    const services = serviceRows.slice(0, OVERVIEW_PAGE_SIZE);
    const servers = serverRows.slice(0, SERVERS_PAGE_SIZE);
    const copies = await copiesOfServices(db, services.map((service) => service.id), COPIES_SHOWN);
    const link = (params: OverviewQuery) => `/panel?${new URLSearchParams(Object.entries(params).filter(([, v]) => v) as [string, string][])}`;
    // A search that stopped before the team's end (service-name-search.ts) goes on from where it stopped.
    const nextServices = serviceRows.length > OVERVIEW_PAGE_SIZE ? link({ q: search, after: services.at(-1)?.id, servers_after: serversAfter })
      : searchedTo ? link({ q: search, after: searchedTo, servers_after: serversAfter }) : null;
    const nextServers = serverRows.length > SERVERS_PAGE_SIZE ? link({ q: search, after, servers_after: servers.at(-1)?.id }) : null;
    const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
    // Owners and admins change backup schedules (backup-schedule-page.ts); members see no link to a page they cannot open.
    const schedules = session.team.role !== 'member';
    const serviceRow = (service: OverviewService, copy: boolean) => serviceRowOf(service, copy, schedules);
    return sendPage(reply, page('Overview', html`
<p class="pending-decisions${pendingDecisions > 0 ? ' notice' : ''}"><a href="${DECISIONS_PATH}">${pendingDecisions === 0 ? 'No decisions pending'
      : `${pendingDecisions} ${pendingDecisions === 1 ? 'decision waits' : 'decisions wait'} for an answer`}</a></p>
${unhealthyRows.length === 0 ? '' : html`<section class="unhealthy">
<h2>Unhealthy</h2>
<table>
  <thead><tr><th>Name</th><th>State</th><th>Unhealthy since</th><th>Server</th></tr></thead>
  <tbody>${unhealthyRows.slice(0, UNHEALTHY_SHOWN).map((service) => html`<tr data-unhealthy="${service.id}"><td><a href="${SERVICE_PAGE_PATH}/${service.id}">${service.name}</a>${service.parent_id ? html` <span class="muted">(copy)</span>` : ''}</td>
    <td class="state">${service.state}</td><td>${service.health_since ? `${service.health_since.slice(0, 19).replace('T', ' ')} UTC` : ''}</td><td>${service.server_name ?? ''}</td></tr>`)}</tbody>
</table>${unhealthyRows.length > UNHEALTHY_SHOWN ? html`<p class="muted">More are unhealthy: <code>GET /api/service-erp?health=unhealthy</code> lists them all.</p>` : ''}
</section>`}
<h2>ERP services</h2>
${roleAllows(session, createErpService) ? html`<form method="get" action="${NEW_SERVICE_PATH}"><button type="submit">New service</button></form>` : ''}
<p class="service-counts">${total} ${total === 1 ? 'ERP service' : 'ERP services'} (copies included)${[...counts].sort(([a], [b]) => a.localeCompare(b))
      .map(([state, count]) => html` · <span class="state">${state}</span>: <span data-state-count="${state}">${count}</span>`)}</p>
<form method="get" action="/panel" role="search">
  <label>Find a service by name <input type="search" name="q" value="${search}" maxlength="100"></label>
  <button type="submit">Search</button>${search ? html` <a href="/panel">Show all</a>` : ''}
</form>
${searchedTo ? html`<p class="notice search-stopped">A search like this one reads ${WALK_LIMIT.toLocaleString('en')} ERP services at a time:
  <a href="${nextServices}">search the next ${WALK_LIMIT.toLocaleString('en')}</a>, or type more of the name.</p>` : ''}
${services.length === 0 ? html`<p class="muted">${search ? (searchedTo ? `None of ${after ? 'the next' : 'the first'} ${WALK_LIMIT.toLocaleString('en')} ERP services has a name containing that.`
      : 'No ERP service has a name containing that.') : after ? 'No more ERP services.' : 'No ERP services yet.'}</p>` : html`
<table>
  <thead><tr><th>Name</th><th>State</th><th>Revision</th><th>Server</th><th>Id</th></tr></thead>
  <tbody>
  ${services.map((service) => {
    const group = copies.get(service.id);
    return html`${serviceRow(service, false)}${group?.shown.map((copy) => serviceRow(copy, true))}${group && group.total > group.shown.length
      ? html`<tr><td colspan="5" class="muted">↳ and ${group.total - group.shown.length} more copies</td></tr>` : ''}`;
  })}
  </tbody>
</table>`}
<p>${after ? html`<a href="${link({ q: search, servers_after: serversAfter })}">First page</a> ` : ''}${nextServices ? html`<a rel="next" href="${nextServices}">Next ERP services</a>` : ''}</p>
<h2>Servers</h2>
${roleAllows(session, createServer) ? html`<form method="get" action="${NEW_SERVER_PATH}"><button type="submit">New server</button></form>` : ''}
${servers.length === 0 ? html`<p class="muted">${serversAfter ? 'No more servers.' : 'No servers yet.'}</p>` : html`
<table>
  <thead><tr><th>Name</th><th>State</th><th>Capacity</th><th>Id</th></tr></thead>
  <tbody>${servers.map((row) => html`<tr><td>${row.name}</td><td class="state">${row.state}${row.reachable === 1 ? ''
    : html` · <span class="error">unreachable since ${(row.reachable_since ?? '').slice(0, 19).replace('T', ' ')} UTC</span>`}</td><td>${row.capacity}</td><td class="muted">${row.id}</td></tr>`)}</tbody>
</table>`}
<p>${serversAfter ? html`<a href="${link({ q: search, after })}">First servers</a> ` : ''}${nextServers ? html`<a href="${nextServers}">Next servers</a>` : ''}</p>`, session));
  });
}

function serviceRowOf(service: OverviewService, copy: boolean, scheduleLink: boolean): Html {
  return html`
    <tr><td>${copy ? html`↳ ` : ''}<a href="${SERVICE_PAGE_PATH}/${service.id}">${service.name}</a>${copy ? html` <span class="muted">(copy)</span>` : ''}</td><td class="state">${service.state}</td><td>${service.revision}</td>
      <td>${service.server_name ?? ''}</td><td class="muted">${service.id}${scheduleLink ? html` · <a href="${backupSchedulePath(service.id)}">Backup schedule</a>` : ''}</td></tr>`;
}
