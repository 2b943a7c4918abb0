// Notifications (owners and admins, who are the ones emailed): which kinds of incident each
// member is emailed about (src/health/notification-kinds.ts), chosen for themselves. The emails
// go through the relay the operator set (admin set-notification-mail); the page says when none is.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { nowIso } from '../db/ids.js';
import { findMemberNotificationKinds, findNotificationMail, setMemberNotificationKinds } from '../db/repositories/incidents.js';
import { chosenKinds, NOTIFICATION_KINDS } from '../health/notification-kinds.js';
import { html, type Html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { requireCsrf, requireRole, requireTeamSession, type TeamSession } from './session-guard.js';

export const NOTIFICATIONS_PATH = '/panel/notifications';

export function registerNotificationsPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function emailed(request: FastifyRequest, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (session) requireRole(session, ['owner', 'admin'], 'the Notifications page (owners and admins are the ones emailed)');
    return session;
  }

  const render = async (session: TeamSession, notice?: Html) => {
    const [chosen, relay] = await Promise.all([
      findMemberNotificationKinds(db, session.team.id, session.userId).then(chosenKinds), findNotificationMail(db),
    ]);
    return page('Notifications', html`${notice ?? ''}
<p>Which incidents ${session.email} is emailed about: one email when one starts, one when it ends (a service that keeps failing and
recovering mails at most once an hour). Webhooks receive every event whatever is chosen here.</p>
${relay ? '' : html`<p class="notice">No email is sent yet: the operator has not set the relay (<code>teaminfra admin set-notification-mail</code>).</p>`}
<form method="post" action="${NOTIFICATIONS_PATH}">${csrfField(session)}
  <fieldset><legend>Email me when</legend>
  ${NOTIFICATION_KINDS.map(({ kind, label }) => html`<label><input type="checkbox" name="kinds" value="${kind}"${chosen.includes(kind) ? html` checked` : ''}> ${label}</label><br>`)}
  </fieldset>
  <button type="submit">Save</button>
</form>`, session);
  };

  server.get(NOTIFICATIONS_PATH, async (request, reply) => {
    const session = await emailed(request, reply);
    return session ? sendPage(reply, await render(session)) : reply;
  });

  server.post<{ Body: { kinds?: string | string[] } }>(NOTIFICATIONS_PATH, async (request, reply) => {
    const session = await emailed(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const given = request.body?.kinds;
    const asked = new Set(given === undefined ? [] : Array.isArray(given) ? given : [given]);
    // Unknown values are ignored, not an error: the form only ever sends the kinds it lists.
    const kinds = NOTIFICATION_KINDS.map((entry) => entry.kind).filter((kind) => asked.has(kind));
    await setMemberNotificationKinds(db, session.team.id, session.userId, kinds, nowIso());
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'set_notifications', outcome: 'allowed', detail: kinds.join(',') || 'none' });
    return sendPage(reply, await render(session, html`<p class="notice saved">Saved.</p>`));
  });
}
