// The overview: how many decisions wait for an answer, the team's servers and ERP services (with
// their copies) and their state.
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { countPendingDecisions } from '../db/repositories/decisions.js';
import { nowIso } from '../db/ids.js';
import { DECISIONS_PATH } from './decisions-page.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { requireTeamSession } from './session-guard.js';

export function registerOverview(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  server.get('/panel', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const [pendingDecisions, servers, services] = await Promise.all([
      countPendingDecisions(db, session.team.id, nowIso()),
      db.selectFrom('servers').select(['id', 'name', 'state', 'capacity']).where('team_id', '=', session.team.id)
        .where('deleted_at', 'is', null).orderBy('id').execute(),
      db.selectFrom('erp_services').select(['id', 'name', 'state', 'server_id', 'parent_id', 'revision'])
        .where('team_id', '=', session.team.id).where('deleted_at', 'is', null).orderBy('id').execute(),
    ]);
    const serverNames = new Map(servers.map((row) => [row.id, row.name]));
    const topLevel = services.filter((service) => service.parent_id === null);
    const copiesOf = (id: string) => services.filter((service) => service.parent_id === id);
    return sendPage(reply, page('Overview', html`
<p class="pending-decisions${pendingDecisions > 0 ? ' notice' : ''}"><a href="${DECISIONS_PATH}">${pendingDecisions === 0 ? 'No decisions pending'
      : `${pendingDecisions} ${pendingDecisions === 1 ? 'decision waits' : 'decisions wait'} for an answer`}</a></p>
<h2>ERP services</h2>
${topLevel.length === 0 ? html`<p class="muted">No ERP services yet.</p>` : html`
<table>
  <thead><tr><th>Name</th><th>State</th><th>Revision</th><th>Server</th><th>Id</th></tr></thead>
  <tbody>
  ${topLevel.map((service) => html`
    <tr><td>${service.name}</td><td class="state">${service.state}</td><td>${service.revision}</td>
      <td>${serverNames.get(service.server_id) ?? ''}</td><td class="muted">${service.id}</td></tr>
    ${copiesOf(service.id).map((copy) => html`
    <tr><td>↳ ${copy.name} <span class="muted">(copy)</span></td><td class="state">${copy.state}</td><td>${copy.revision}</td>
      <td>${serverNames.get(copy.server_id) ?? ''}</td><td class="muted">${copy.id}</td></tr>`)}`)}
  </tbody>
</table>`}
<h2>Servers</h2>
${servers.length === 0 ? html`<p class="muted">No servers yet.</p>` : html`
<table>
  <thead><tr><th>Name</th><th>State</th><th>Capacity</th><th>Id</th></tr></thead>
  <tbody>${servers.map((row) => html`<tr><td>${row.name}</td><td class="state">${row.state}</td><td>${row.capacity}</td><td class="muted">${row.id}</td></tr>`)}</tbody>
</table>`}`, session));
  });
}
