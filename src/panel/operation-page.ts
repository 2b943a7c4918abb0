// Where a panel action leads: the operation it queued, followed to its end. The page is read
// through invoke() (get_operation, as the member), so that a created service's initial
// credentials are shown once, on this page, to the member who created it, exactly as the API
// shows them once to the token that did. Until the operation ends the page follows it: with
// scripts, panel.js asks `…/live` for its state and steps and reloads the page once it ended;
// without, the page reloads itself every few seconds.
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { invoke } from '../core/invoke.js';
import { findReachableOperation } from '../db/repositories/operations.js';
import getOperation from '../../tools/operations/get-operation.js';
import type { Infer, OperationDetailView } from '../../tools/schemas.js';
import { operationStepsOf } from '../../tools/views.js';
import { html, type Html } from './html.js';
import { page, sendPage } from './layout.js';
import { memberCredentials, memberPrincipal } from './member-principal.js';
import { PanelRefusal, requireTeamSession } from './session-guard.js';

const OPERATIONS = '/panel/operations';
const ID = /^op_[0-9a-z]{20}$/;
const FOLLOW_EVERY_SECONDS = 2;
const TITLES: Record<string, string> = {
  start: 'Start', stop: 'Stop', redeploy: 'Redeploy', create: 'Create', delete: 'Delete', copy: 'Make a copy',
  backup: 'Back up', restore: 'Restore', create_server: 'Create a server',
};

export const operationPath = (operationId: string) => `${OPERATIONS}/${operationId}`;
const ended = (state: string) => state === 'succeeded' || state === 'failed';
type Operation = Infer<typeof OperationDetailView>;

export function registerOperationPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  const checkedId = (id: string) => {
    if (!ID.test(id)) throw new PanelRefusal(404, 'No such operation', 'This operation does not exist in your team.');
    return id;
  };

  server.get<{ Params: { id: string } }>(`${OPERATIONS}/:id`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const operation = await invoke(getOperation, { operation_id: checkedId(request.params.id) }, memberCredentials(session), app);
    // Deleted rows too: a delete's page still names what it deleted.
    const service = operation.service_id === null ? undefined
      : await db.selectFrom('erp_services').select(['id', 'name', 'deleted_at']).where('id', '=', operation.service_id)
        .where('team_id', '=', session.team.id).executeTakeFirst();
    // A server's creation is named by the server it creates, as a service's operation is by its service.
    const createdServer = operation.kind === 'create_server' && operation.server_id !== null
      ? await db.selectFrom('servers').select('name').where('id', '=', operation.server_id).where('team_id', '=', session.team.id).executeTakeFirst()
      : undefined;
    const subject = service?.name ?? createdServer?.name;
    const title = `${TITLES[operation.kind] ?? operation.kind}${subject ? `: ${subject}` : ''}`;
    return sendPage(reply, page(title, html`
${service && !service.deleted_at ? html`<p><a href="/panel/services/${service.id}">← ${service.name}</a></p>` : html`<p><a href="/panel">← Overview</a></p>`}
<div data-live-operation data-live-url="${OPERATIONS}/${operation.id}/live">
<table class="facts">
  <tr><th>State</th><td class="state" data-live="state" aria-live="polite">${operation.state}</td></tr>
  <tr><th>Why</th><td data-live="reason">${operation.reason ?? '—'}</td></tr>
  <tr><th>Asked at</th><td>${operation.created_at.slice(0, 19).replace('T', ' ')} UTC</td></tr>
  <tr><th>Id</th><td class="muted">${operation.id}</td></tr>
</table>
<h2>Steps</h2>
<ol class="steps" data-live="steps">${stepItems(operation.steps)}</ol>
</div>
${ended(operation.state) ? outcome(operation, service) : html`<p class="muted" role="status">This page follows the operation to its end.</p>
<noscript><meta http-equiv="refresh" content="${FOLLOW_EVERY_SECONDS}"></noscript>`}`, session));
  });

  // What the page's script asks until the operation ends; a read of the team's operation, which takes nothing (no credentials).
  server.get<{ Params: { id: string } }>(`${OPERATIONS}/:id/live`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const row = await findReachableOperation(db, memberPrincipal(session).reach, checkedId(request.params.id));
    if (!row) throw new PanelRefusal(404, 'No such operation', 'This operation does not exist in your team.');
    return reply.type('application/json; charset=utf-8').header('Cache-Control', 'no-store').send(JSON.stringify({
      state: row.state, reason: row.reason, ended: ended(row.state), steps: operationStepsOf(row).map(stepText),
    }));
  });
}

function stepText(step: Operation['steps'][number]): string {
  return `${step.step}: ${step.outcome} in ${step.duration_ms} ms${step.detail ? ` (${step.detail})` : ''}`;
}

function stepItems(steps: Operation['steps']): Html {
  return steps.length === 0 ? html`<li class="muted">Waiting for its first step.</li>` : html`${steps.map((step) => html`<li>${stepText(step)}</li>`)}`;
}

/** What an ended operation leads to: what went wrong, or where to go next (and a create's credentials, this once). */
function outcome(operation: Operation, service: { id: string; name: string; deleted_at: string | null } | undefined): Html {
  if (operation.state === 'failed') return html`<p class="error" role="alert">It failed: ${operation.reason ?? 'no reason was recorded.'}</p>`;
  const credentials = operation.result?.initial_credentials;
  const shownBefore = operation.result?.initial_credentials_shown;
  const safetyBackup = operation.result?.safety_backup_id;
  const open = service && !service.deleted_at ? html`<a href="/panel/services/${service.id}">Open ${service.name}</a>` : html`<a href="/panel">Back to the overview</a>`;
  return html`<p class="notice" role="status">Done. ${open}${operation.backup_id && service ? html` · <a href="/panel/services/${service.id}/backups">Backups of ${service.name}</a>` : ''}</p>
${safetyBackup ? html`<p>The data it replaced is kept in the safety backup <code>${safetyBackup}</code>.</p>` : ''}
${credentials ? html`<div class="notice credentials"><p><strong>Copy these initial credentials now.</strong> They are shown only once, on this page; teaminfra keeps them nowhere since.</p>
<table class="facts"><tr><th>Login</th><td><code>${credentials.login}</code></td></tr><tr><th>Password</th><td><code>${credentials.password}</code></td></tr>
${Object.entries(credentials.fields ?? {}).map(([name, value]) => html`<tr><th>${name}</th><td><code>${value}</code></td></tr>`)}</table></div>` : ''}
${shownBefore ? html`<p class="muted">${shownBefore}</p>` : ''}`;
}
