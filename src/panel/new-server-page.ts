// New server, from the Overview's servers (roles with servers:write): a name and a capacity, the
// fields create_server takes. The form calls it through invoke() as the member, shows the API's
// own sentences beside the field they are about, and once queued leads to the operation page,
// which follows the server's provisioning to its end.
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import type { FieldError } from '../core/errors.js';
import { invoke } from '../core/invoke.js';
import createServer from '../../tools/servers/create-server.js';
import { describedBy, errorBeside, formRefusalOf, otherErrors } from './field-errors.js';
import { html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { memberCredentials, roleAllows } from './member-principal.js';
import { operationPath } from './operation-page.js';
import { PanelRefusal, requireCsrf, requireTeamSession, type TeamSession } from './session-guard.js';

export const NEW_SERVER_PATH = '/panel/servers/new';
const SERVERS = '/panel/servers';
/** What the form proposes; create_server's own default, which an empty field leaves to the API. */
const DEFAULT_CAPACITY = 20;
const NUMBER = /^\s*[+-]?\d+(\.\d+)?\s*$/;
type Body = Record<string, string | string[] | undefined>;

/**
 * The capacity as create_server takes it: a form sends text, so a number typed is sent as that
 * number; empty leaves the API's default, and anything else goes as typed, for the API's sentence.
 */
function capacityInput(value: Body[string]): { capacity?: unknown } {
  if (value === undefined || value === '') return {};
  return { capacity: typeof value === 'string' && NUMBER.test(value) ? Number(value) : value };
}

export function registerNewServerPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  function form(session: TeamSession, values: Body, errors: FieldError[]) {
    const value = (field: string) => (typeof values[field] === 'string' ? values[field] : undefined);
    return page('New server', html`${otherErrors(errors, ['name', 'capacity'])}
<form method="post" action="${SERVERS}">${csrfField(session)}
  <label for="server-name">Name</label>
  <input id="server-name" name="name" required maxlength="100" value="${value('name') ?? ''}"${describedBy(errors, 'name')}>
  ${errorBeside(errors, 'name')}
  <label for="server-capacity">Capacity <span class="muted">(how many ERP services it can host, 1 to 200)</span></label>
  <input id="server-capacity" name="capacity" type="number" min="1" max="200" step="1" required value="${value('capacity') ?? String(DEFAULT_CAPACITY)}"${describedBy(errors, 'capacity')}>
  ${errorBeside(errors, 'capacity')}
  <p><button type="submit">Create server</button> <a href="/panel">Cancel</a></p>
</form>`, session);
  }

  server.get(NEW_SERVER_PATH, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    if (!roleAllows(session, createServer)) {
      throw new PanelRefusal(403, 'Not allowed', `Only owners and admins of ${session.team.name} create servers. You are a ${session.team.role}; ask an owner or admin.`);
    }
    return sendPage(reply, form(session, {}, []));
  });

  server.post<{ Body: Body }>(SERVERS, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const { _csrf: _secret, capacity, ...fields } = request.body ?? {};
    try {
      // A role without servers:write is refused (403) and recorded by invoke(), as a token would be.
      const operation = await invoke(createServer, { ...fields, ...capacityInput(capacity) }, memberCredentials(session), app);
      return reply.redirect(operationPath(operation.id), 303);
    } catch (error) {
      const { status, errors } = formRefusalOf(error);
      return sendPage(reply, form(session, request.body ?? {}, errors), status);
    }
  });
}
