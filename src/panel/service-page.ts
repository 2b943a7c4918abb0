// A service's page in the panel: its state, its metrics, its latest operations, and (for owners
// and admins: logs can hold personal data and reset links, as services:logs says for tokens) the
// latest lines of its logs. The page refreshes itself without a reload: panel.js asks
// `…/live` every few seconds for the state, the metrics and the lines written since its cursor,
// and adds them as text. Reading is no audit row, as for a token (issue 24).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { App } from '../app.js';
import { findTeamService, latestOperationsOfService } from '../db/repositories/service-overview.js';
import type { LogPage, ServiceMetrics } from '../core/service-observer.js';
import { ObserverRefusal } from '../core/service-observer.js';
import type { Role } from '../db/tables.js';
import { backupSchedulePath } from './backup-schedule-page.js';
import { html, type Html } from './html.js';
import { page, sendPage } from './layout.js';
import { PanelRefusal, requireTeamSession } from './session-guard.js';
import { SERVICE_PAGE_PATH } from './panel-paths.js';

export { SERVICE_PAGE_PATH };
const LOG_LINES = 200;
const OPERATIONS_SHOWN = 10;
const ID = /^svc_[0-9a-z]{20}$/;
const READS_LOGS: readonly Role[] = ['owner', 'admin'];

export function registerServicePage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  const serviceOf = async (teamId: string, id: string) => {
    const service = ID.test(id) ? await findTeamService(db, teamId, id) : undefined;
    if (!service) throw new PanelRefusal(404, 'No such ERP service', 'This ERP service does not exist in your team, or it was deleted.');
    return service;
  };

  server.get<{ Params: { id: string } }>(`${SERVICE_PAGE_PATH}/:id`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const service = await serviceOf(session.team.id, request.params.id);
    const readsLogs = READS_LOGS.includes(session.team.role);
    const [metrics, operations, logs] = await Promise.all([
      observed(() => app.observer?.metrics(service.id)),
      latestOperationsOfService(db, session.team.id, service.id, OPERATIONS_SHOWN),
      readsLogs ? observed(() => app.observer?.logs(service.id, { tail: LOG_LINES, start: { kind: 'latest' } })) : undefined,
    ]);
    const live = `${SERVICE_PAGE_PATH}/${service.id}/live`;
    return sendPage(reply, page(service.name, html`
<p><a href="/panel">← Overview</a></p>
<div data-live-service data-live-url="${live}"${logs && 'lines' in logs ? html` data-cursor="${logs.next_cursor}"` : ''}>
<table class="facts">
  <tr><th>State</th><td class="state" data-live="state">${service.state}</td></tr>
  ${service.state_reason ? html`<tr><th>Why</th><td data-live="reason">${service.state_reason}</td></tr>` : ''}
  <tr><th>Revision</th><td data-live="revision">${service.revision}</td></tr>
  <tr><th>Server</th><td>${service.server_name ?? ''}</td></tr>
  <tr><th>Id</th><td class="muted">${service.id}${service.parent_id ? html` (a copy of ${service.parent_id})` : ''}</td></tr>
</table>
${readsLogs ? html`<p><a href="${backupSchedulePath(service.id)}">Backup schedule</a></p>` : ''}
<h2>Metrics</h2>
${metricsTable(metrics)}
<h2>Latest operations</h2>
${operations.length === 0 ? html`<p class="muted">No operations yet.</p>` : html`<table>
  <thead><tr><th>When</th><th>Kind</th><th>State</th><th>Reason</th><th>Id</th></tr></thead>
  <tbody>${operations.map((operation) => html`<tr><td>${operation.created_at}</td><td>${operation.kind}</td><td class="state">${operation.state}</td>
    <td>${operation.reason ?? ''}</td><td class="muted">${operation.id}</td></tr>`)}</tbody>
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
    const readsLogs = READS_LOGS.includes(session.team.role) && cursor !== undefined;
    const [metrics, logs] = await Promise.all([
      observed(() => app.observer?.metrics(service.id)),
      readsLogs ? observed(() => app.observer?.logs(service.id, { tail: 1000, start: { kind: 'cursor', cursor } })) : undefined,
    ]);
    return sendJson(reply, {
      state: service.state, revision: service.revision, reason: service.state_reason,
      metrics: 'running' in metrics ? metricsSummary(metrics) : null,
      logs: logs && 'lines' in logs ? logs : null,
    });
  });
}

/** What the observer answered, or the sentence of its refusal (an engine that does not answer). */
async function observed<T>(read: () => Promise<T> | undefined): Promise<T | { refusal: string }> {
  try {
    const value = await read();
    return value ?? { refusal: 'This server runs without an engine.' };
  } catch (error) {
    if (error instanceof ObserverRefusal) return { refusal: error.reason };
    throw error;
  }
}

function metricsTable(metrics: ServiceMetrics | { refusal: string }): Html {
  if (!('running' in metrics)) return html`<p class="error">${metrics.refusal}</p>`;
  const summary = metricsSummary(metrics);
  return html`<table class="facts">${Object.entries(summary).map(([label, value]) => html`<tr><th>${label}</th><td data-metric="${label}">${value}</td></tr>`)}</table>`;
}

/** The metrics as the page shows them, label to text; the script replaces each cell by its label. */
function metricsSummary(metrics: ServiceMetrics): Record<string, string> {
  const bytes = (value: number | null) => (value === null ? '—' : value >= 1_048_576 ? `${(value / 1_048_576).toFixed(1)} MiB` : `${Math.round(value / 1024)} KiB`);
  return {
    Running: metrics.running ? 'yes' : 'no',
    Uptime: metrics.uptime_seconds === null ? '—' : duration(metrics.uptime_seconds),
    Restarts: metrics.restarts === null ? '—' : String(metrics.restarts),
    CPU: metrics.cpu ? `${metrics.cpu.percent}% of one core (last ${Math.round(metrics.cpu.window_seconds)} s)` : '—',
    Memory: metrics.memory_bytes === null ? '—' : `${bytes(metrics.memory_bytes)} of ${bytes(metrics.memory_limit_bytes)}`,
    Data: bytes(metrics.data_bytes),
  };
}

function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  return seconds < 172_800 ? `${Math.floor(seconds / 3600)} h` : `${Math.floor(seconds / 86_400)} days`;
}

function sendJson(reply: FastifyReply, body: { state: string; revision: number; reason: string | null; metrics: Record<string, string> | null; logs: LogPage | null }) {
  return reply.type('application/json; charset=utf-8').header('Cache-Control', 'no-store').send(JSON.stringify(body));
}
