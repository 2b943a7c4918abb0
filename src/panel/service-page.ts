// A service's page in the panel: its address, its state, when a backup of it was last proven to
// restore (restore-drill-fact.ts), the actions the member's role allows (service-actions.ts), its
// copies, its metrics, its latest operations, and (for owners and admins: logs can hold personal
// data and reset links, as services:logs says for tokens) the latest lines of its logs. The page
// refreshes itself without a reload: panel.js asks
// `…/live` every few seconds for the state, the address, the metrics and the lines written since
// its cursor, and adds them as text. Reading is no audit row, as for a token (issue 24).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { App } from '../app.js';
import { findTeamService, latestOperationsOfService, moveTargetsOf } from '../db/repositories/service-overview.js';
import type { LogPage } from '../core/service-observer.js';
import { serviceUrl } from '../engine/service-url.js';
import { backupSchedulePath } from './backup-schedule-page.js';
import { backupsPath } from './backups-page.js';
import { caughtEmailsPath } from './caught-emails-page.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { roleAllows, roleHolds } from './member-principal.js';
import moveErpService from '../../tools/services/move-erp-service.js';
import { serviceActionForms } from './service-actions.js';
import { copiesSection } from './service-copies.js';
import { restoreDrillFact } from './restore-drill-fact.js';
import { metricsSummary, metricsTable, observed } from './service-observations.js';
import { PanelRefusal, requireTeamSession } from './session-guard.js';
import { SERVICE_PAGE_PATH } from './panel-paths.js';

export { SERVICE_PAGE_PATH };
const LOG_LINES = 200;
const OPERATIONS_SHOWN = 10;
const ID = /^svc_[0-9a-z]{20}$/;

export function registerServicePage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  const serviceOf = async (teamId: string, id: string) => {
    const service = ID.test(id) ? await findTeamService(db, teamId, id) : undefined;
    if (!service) throw new PanelRefusal(404, 'No such ERP service', 'This ERP service does not exist in your team, or it was deleted.');
    return service;
  };

  server.get<{ Params: { id: string }; Querystring: { copies_after?: string } }>(`${SERVICE_PAGE_PATH}/:id`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const service = await serviceOf(session.team.id, request.params.id);
    const readsLogs = roleHolds(session, 'services:logs');
    const [metrics, operations, logs, copies, drill, moveTargets] = await Promise.all([
      observed(() => app.observer?.metrics(service.id)),
      latestOperationsOfService(db, session.team.id, service.id, OPERATIONS_SHOWN),
      readsLogs ? observed(() => app.observer?.logs(service.id, { tail: LOG_LINES, start: { kind: 'latest' } })) : undefined,
      service.parent_id === null ? copiesSection(app, session, service.id, request.query.copies_after) : undefined,
      restoreDrillFact(db, service),
      roleAllows(session, moveErpService) && service.server_id ? moveTargetsOf(db, session.team.id, service.server_id) : [],
    ]);
    const live = `${SERVICE_PAGE_PATH}/${service.id}/live`;
    const url = serviceUrl(service);
    return sendPage(reply, page(service.name, html`
<p><a href="${service.parent_id ? `${SERVICE_PAGE_PATH}/${service.parent_id}` : '/panel'}">← ${service.parent_id ? 'The service it copies' : 'Overview'}</a></p>
<div data-live-service data-live-url="${live}"${logs && 'lines' in logs ? html` data-cursor="${logs.next_cursor}"` : ''}>
<table class="facts">
  <tr><th>Address</th><td data-live="address">${url ? html`<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>` : html`<span class="muted">none while it is not running</span>`}</td></tr>
  <tr><th>State</th><td class="state" data-live="state" aria-live="polite">${service.state}</td></tr>
  <tr><th>Why</th><td data-live="reason">${service.state_reason ?? '—'}</td></tr>
  <tr><th>Revision</th><td data-live="revision">${service.revision}</td></tr>
  <tr><th>Server</th><td>${service.server_name ?? ''}</td></tr>
  ${drill}
  <tr><th>Id</th><td class="muted">${service.id}${service.parent_id ? html` (a copy of ${service.parent_id})` : ''}</td></tr>
</table>
<h2>Actions</h2>
${serviceActionForms(session, service, moveTargets)}
<p><a href="${backupsPath(service.id)}">Backups</a>${roleHolds(session, 'backups:delete') ? html` · <a href="${backupSchedulePath(service.id)}">Backup schedule</a>` : ''}${service.parent_id && roleHolds(session, 'mailcatcher:read') ? html` · <a href="${caughtEmailsPath(service.id)}">Caught emails</a>` : ''}</p>
${copies ?? ''}
<h2>Metrics</h2>
${metricsTable(metrics)}
<h2>Latest operations</h2>
${operations.length === 0 ? html`<p class="muted">No operations yet.</p>` : html`<table>
  <thead><tr><th>When</th><th>Kind</th><th>State</th><th>Reason</th><th>Id</th></tr></thead>
  <tbody>${operations.map((operation) => html`<tr><td>${operation.created_at}</td><td>${operation.kind}</td><td class="state">${operation.state}</td>
    <td>${operation.reason ?? ''}</td><td class="muted"><a href="/panel/operations/${operation.id}">${operation.id}</a></td></tr>`)}</tbody>
</table>`}
${readsLogs ? html`<h2>Logs</h2>${logs && 'lines' in logs ? html`<p class="muted">The latest ${LOG_LINES} lines; new lines appear as they are written.</p>
<pre class="logs" data-live="logs">${logs.lines.map((line) => html`<span>${line.container ? `[${line.container}] ` : ''}${line.at ? `${line.at} ` : ''}${line.text}\n</span>`)}</pre>`
    : html`<p class="error">${logs?.refusal ?? 'The logs cannot be read now.'}</p>`}` : html`<p class="muted">Owners and admins see this service's logs here.</p>`}
</div>`, session));
  });

  // What the page's script asks every few seconds: the state, the metrics, and (for owners and admins) the lines after its cursor.
  server.get<{ Params: { id: string }; Querystring: { cursor?: string } }>(`${SERVICE_PAGE_PATH}/:id/live`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const service = await serviceOf(session.team.id, request.params.id);
    const cursor = typeof request.query.cursor === 'string' && request.query.cursor.length <= 100 ? request.query.cursor : undefined;
    const readsLogs = roleHolds(session, 'services:logs') && cursor !== undefined;
    const [metrics, logs] = await Promise.all([
      observed(() => app.observer?.metrics(service.id)),
      readsLogs ? observed(() => app.observer?.logs(service.id, { tail: 1000, start: { kind: 'cursor', cursor } })) : undefined,
    ]);
    return sendJson(reply, {
      state: service.state, revision: service.revision, reason: service.state_reason, url: serviceUrl(service),
      metrics: 'running' in metrics ? metricsSummary(metrics) : null,
      logs: logs && 'lines' in logs ? logs : null,
    });
  });
}

function sendJson(reply: FastifyReply, body: { state: string; revision: number; reason: string | null; url: string | null; metrics: Record<string, string> | null; logs: LogPage | null }) {
  return reply.type('application/json; charset=utf-8').header('Cache-Control', 'no-store').send(JSON.stringify(body));
}
