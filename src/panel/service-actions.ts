// A service's actions in the panel: Start, Stop, Redeploy, Back up now, Make a copy, Move to... and Delete,
// each a form posted to the panel that calls the capability through invoke() as the member
// (member-principal.ts), then follows the operation it queued (operation-page.ts). A member sees
// only the buttons of their role; a forced POST of another is refused by invoke() (403) and
// recorded. Delete asks for the service's name, typed, before anything is asked of invoke().
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { invoke } from '../core/invoke.js';
import createBackup from '../../tools/backups/create-backup.js';
import createCopy from '../../tools/services/create-copy.js';
import deleteErpService from '../../tools/services/delete-erp-service.js';
import moveErpService from '../../tools/services/move-erp-service.js';
import redeployErpService from '../../tools/services/redeploy-erp-service.js';
import startErpService from '../../tools/services/start-erp-service.js';
import stopErpService from '../../tools/services/stop-erp-service.js';
import { describedBy, errorBeside, formRefusalOf, otherErrors } from './field-errors.js';
import { html, type Html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { memberCredentials, roleAllows } from './member-principal.js';
import { moveTargetsOf } from '../db/repositories/service-overview.js';
import { operationPath } from './operation-page.js';
import { PanelRefusal, requireCsrf, requireTeamSession, type TeamSession } from './session-guard.js';

const SERVICES = '/panel/services';
const ID = /^svc_[0-9a-z]{20}$/;

/** The one-button actions: the path after the service's, the button, the capability. */
const SIMPLE_ACTIONS: readonly { path: string; label: string; capability: typeof startErpService }[] = [
  { path: 'start', label: 'Start', capability: startErpService },
  { path: 'stop', label: 'Stop', capability: stopErpService },
  { path: 'redeploy', label: 'Redeploy', capability: redeployErpService },
  { path: 'backups', label: 'Back up now', capability: createBackup },
];

interface NamedService { id: string; name: string }
type Body = Record<string, string | string[] | undefined>;

/** The forms the member's role allows, for the service page. */
export function serviceActionForms(session: TeamSession, service: NamedService, moveTargets: readonly ServerChoice[] = []): Html {
  const allowed = SIMPLE_ACTIONS.filter((action) => roleAllows(session, action.capability));
  const buttons = allowed.map((action) => html`<form method="post" action="${SERVICES}/${service.id}/${action.path}" class="inline">${csrfField(session)}<button type="submit">${action.label}</button></form> `);
  const copies = roleAllows(session, createCopy) ? copyForm(session, service, {}, []) : html``;
  const move = roleAllows(session, moveErpService) && moveTargets.length > 0 ? moveForm(session, service, moveTargets, {}, []) : html``;
  const deletion = roleAllows(session, deleteErpService) ? deleteForm(session, service, []) : html``;
  if (allowed.length === 0 && !copies.text && !deletion.text) return html`<p class="muted">Your role lets you read this service, not act on it.</p>`;
  return html`<div class="actions">${buttons}</div>${copies}${move}${deletion}`;
}

interface ServerChoice { id: string; name: string }

function moveForm(session: TeamSession, service: NamedService, targets: readonly ServerChoice[], values: Body, errors: readonly { field: string; message: string }[]): Html {
  const chosen = typeof values.server_id === 'string' ? values.server_id : '';
  return html`<form method="post" action="${SERVICES}/${service.id}/move" class="action-form">${csrfField(session)}
  <label for="move-server">Move to another server, with its data <span class="muted">(it serves until a short write pause; the old server keeps it for a rollback)</span></label>
  <select id="move-server" name="server_id" required${describedBy(errors, 'server_id')}>
    ${targets.map((target) => html`<option value="${target.id}"${target.id === chosen ? ' selected' : ''}>${target.name}</option>`)}
  </select>
  ${errorBeside(errors, 'server_id')}
  <button type="submit">Move</button>
</form>`;
}

function copyForm(session: TeamSession, service: NamedService, values: Body, errors: readonly { field: string; message: string }[]): Html {
  return html`<form method="post" action="${SERVICES}/${service.id}/copies" class="action-form">${csrfField(session)}
  <label for="copy-name">Name of the copy <span class="muted">(empty: “${service.name} (copy)”)</span></label>
  <input id="copy-name" name="name" maxlength="100" value="${typeof values.name === 'string' ? values.name : ''}"${describedBy(errors, 'name')}>
  ${errorBeside(errors, 'name')}
  <button type="submit">Make a copy</button>
</form>`;
}

function deleteForm(session: TeamSession, service: NamedService, errors: readonly { field: string; message: string }[]): Html {
  return html`<form method="post" action="${SERVICES}/${service.id}/delete" class="action-form danger-zone">${csrfField(session)}
  <label for="confirm-name">Delete removes this service, its data and its copies for good (back it up first). To confirm, type its name, “${service.name}”</label>
  <input id="confirm-name" name="confirm_name" required autocomplete="off"${describedBy(errors, 'confirm_name')}>
  ${errorBeside(errors, 'confirm_name')}
  <button type="submit" class="danger">Delete</button>
</form>`;
}

export function registerServiceActions(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  /** The member and the service named in the path (of their team), once the form's CSRF token is checked. */
  async function formOf(request: FastifyRequest, reply: FastifyReply, id: string) {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return undefined;
    requireCsrf(session, request);
    const service = ID.test(id) ? await db.selectFrom('erp_services').select(['id', 'name']).where('id', '=', id)
      .where('team_id', '=', session.team.id).where('deleted_at', 'is', null).executeTakeFirst() : undefined;
    if (!service) throw new PanelRefusal(404, 'No such ERP service', 'This ERP service does not exist in your team, or it was deleted.');
    return { session, service };
  }

  for (const action of SIMPLE_ACTIONS) {
    server.post<{ Params: { id: string } }>(`${SERVICES}/:id/${action.path}`, async (request, reply) => {
      const form = await formOf(request, reply, request.params.id);
      if (!form) return reply;
      const operation = await invoke(action.capability, { service_id: form.service.id }, memberCredentials(form.session), app);
      return reply.redirect(operationPath(operation.id), 303);
    });
  }

  server.post<{ Params: { id: string }; Body: Body }>(`${SERVICES}/:id/copies`, async (request, reply) => {
    const form = await formOf(request, reply, request.params.id);
    if (!form) return reply;
    const name = request.body?.name;
    // Empty: the API's default name. Anything else goes as typed, for the API's own sentences.
    const input = { service_id: form.service.id, ...(name === '' || name === undefined ? {} : { name }) };
    try {
      const operation = await invoke(createCopy, input, memberCredentials(form.session), app);
      return reply.redirect(operationPath(operation.id), 303);
    } catch (error) {
      const { status, errors } = formRefusalOf(error);
      return sendPage(reply, page(`Make a copy of ${form.service.name}`, html`${otherErrors(errors, ['name'])}
${copyForm(form.session, form.service, request.body ?? {}, errors)}
<p><a href="${SERVICES}/${form.service.id}">Back to ${form.service.name}</a></p>`, form.session), status);
    }
  });

  server.post<{ Params: { id: string }; Body: Body }>(`${SERVICES}/:id/move`, async (request, reply) => {
    const form = await formOf(request, reply, request.params.id);
    if (!form) return reply;
    const serverId = request.body?.server_id;
    try {
      const operation = await invoke(moveErpService, { service_id: form.service.id, server_id: serverId }, memberCredentials(form.session), app);
      return reply.redirect(operationPath(operation.id), 303);
    } catch (error) {
      const { status, errors } = formRefusalOf(error);
      const current = await db.selectFrom('erp_services').select('server_id').where('id', '=', form.service.id).executeTakeFirst();
      const targets = current ? await moveTargetsOf(db, form.session.team.id, current.server_id) : [];
      return sendPage(reply, page(`Move ${form.service.name}`, html`${otherErrors(errors, ['server_id'])}
${targets.length > 0 ? moveForm(form.session, form.service, targets, request.body ?? {}, errors) : html`<p>Your team has no other server to move it to.</p>`}
<p><a href="${SERVICES}/${form.service.id}">Back to ${form.service.name}</a></p>`, form.session), status);
    }
  });

  server.post<{ Params: { id: string }; Body: Body }>(`${SERVICES}/:id/delete`, async (request, reply) => {
    const form = await formOf(request, reply, request.params.id);
    if (!form) return reply;
    // A role without the permission is refused (and recorded) by invoke(), whatever was typed.
    if (roleAllows(form.session, deleteErpService) && request.body?.confirm_name !== form.service.name) {
      const errors = [{ field: 'confirm_name', message: `Type the service's name exactly, “${form.service.name}”, to delete it. Nothing was deleted.` }];
      return sendPage(reply, page(`Delete ${form.service.name}`, html`${deleteForm(form.session, form.service, errors)}
<p><a href="${SERVICES}/${form.service.id}">Back to ${form.service.name}</a></p>`, form.session), 422);
    }
    const operation = await invoke(deleteErpService, { service_id: form.service.id }, memberCredentials(form.session), app);
    return reply.redirect(operationPath(operation.id), 303);
  });
}
