// New service, from the Overview (roles with services:write): a name, a server of the team and
// an app of those the operator registered. The form calls create_erp_service through invoke()
// as the member and shows the API's own sentences beside the field they are about; once queued,
// the operation page follows the create and shows the app's initial credentials there, once.
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import type { FieldError } from '../core/errors.js';
import { invoke } from '../core/invoke.js';
import { listApps } from '../engine/apps/app-registry.js';
import createErpService from '../../tools/services/create-erp-service.js';
import listServers from '../../tools/servers/list-servers.js';
import { describedBy, errorBeside, formRefusalOf, otherErrors } from './field-errors.js';
import { html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { memberCredentials, roleAllows } from './member-principal.js';
import { operationPath } from './operation-page.js';
import { PanelRefusal, requireCsrf, requireTeamSession, type TeamSession } from './session-guard.js';

export const NEW_SERVICE_PATH = '/panel/services/new';
const SERVERS_OFFERED = 200;
type Body = Record<string, string | string[] | undefined>;

export function registerNewServicePage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function form(session: TeamSession, values: Body, errors: FieldError[]) {
    const [servers, apps] = await Promise.all([
      invoke(listServers, { limit: SERVERS_OFFERED }, memberCredentials(session), app),
      listApps(db),
    ]);
    const value = (field: string) => (typeof values[field] === 'string' ? values[field] : '');
    const chosenApp = value('app') || 'demo';
    return page('New service', html`${otherErrors(errors, ['name', 'server_id', 'app'])}
<form method="post" action="/panel/services">${csrfField(session)}
  <label for="service-name">Name</label>
  <input id="service-name" name="name" required maxlength="100" value="${value('name')}"${describedBy(errors, 'name')}>
  ${errorBeside(errors, 'name')}
  <label for="service-server">Server</label>
  <select id="service-server" name="server_id"${describedBy(errors, 'server_id')}>
    ${servers.data.map((row) => html`<option value="${row.id}"${value('server_id') === row.id ? html` selected` : ''}>${row.name} (${row.state})</option>`)}
  </select>
  ${errorBeside(errors, 'server_id')}
  <label for="service-app">App <span class="muted">(registered by the operator; other than demo needs a server that is a Docker engine)</span></label>
  <select id="service-app" name="app"${describedBy(errors, 'app')}>
    ${apps.filter((entry) => !entry.refused).map((entry) => html`<option value="${entry.name}"${chosenApp === entry.name ? html` selected` : ''}>${entry.name}</option>`)}
  </select>
  ${errorBeside(errors, 'app')}
  <p><button type="submit">Create service</button> <a href="/panel">Cancel</a></p>
</form>`, session);
  }

  const creator = (session: TeamSession) => {
    if (!roleAllows(session, createErpService)) {
      throw new PanelRefusal(403, 'Not allowed', `Only owners and admins of ${session.team.name} create services. You are a ${session.team.role}; ask an owner or admin.`);
    }
  };

  server.get(NEW_SERVICE_PATH, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    creator(session);
    return sendPage(reply, await form(session, {}, []));
  });

  server.post<{ Body: Body }>('/panel/services', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const { _csrf: _secret, ...fields } = request.body ?? {};
    try {
      // As typed: invoke() checks it, and a refusal names the field it is about.
      const operation = await invoke(createErpService, fields, memberCredentials(session), app);
      return reply.redirect(operationPath(operation.id), 303);
    } catch (error) {
      const { status, errors } = formRefusalOf(error);
      return sendPage(reply, await form(session, fields, errors), status);
    }
  });
}
