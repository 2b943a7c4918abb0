// Developer > Webhooks (owners and admins): create, list, deliveries log, send a test event,
// redeliver, rotate the signing secret, enable or disable, delete.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import {
  deleteWebhook, findWebhook, listRecentDeliveries, listWebhooks, rotateWebhookSecret, setWebhookEnabled,
} from '../db/repositories/webhooks.js';
import { createWebhook } from '../webhooks/create-webhook.js';
import { EVENT_CATALOG } from '../webhooks/event-catalog.js';
import { redeliver, sendTestEvent } from '../webhooks/test-event.js';
import { WebhookRefusal } from '../webhooks/url-safety.js';
import { html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { PanelRefusal, requireCsrf, requireRole, requireTeamSession, type TeamSession } from './session-guard.js';

const BASE = '/panel/developer/webhooks';
type Body = Record<string, string | string[] | undefined>;

export function registerWebhooksPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  const config = app.config.webhooks;

  async function manager(request: FastifyRequest, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (session) requireRole(session, ['owner', 'admin'], 'the Webhooks page');
    return session;
  }
  async function ownWebhook(session: TeamSession, id: string) {
    const webhook = await findWebhook(db, session.team.id, id);
    if (!webhook) throw new PanelRefusal(404, 'No such webhook', 'This webhook does not exist in your team.');
    return webhook;
  }
  const audit = (session: TeamSession, action: string, targetId: string) =>
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action, outcome: 'allowed', detail: targetId });

  const form = (session: TeamSession, values: Body, error?: string) => page('Create a webhook', html`
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="${BASE}">${csrfField(session)}
  <label>Endpoint URL (https) <input type="url" name="url" required value="${values.url ?? ''}"></label>
  <label>Description <input name="description" maxlength="200" value="${values.description ?? ''}"></label>
  <fieldset><legend>Events</legend>
    <label><input type="radio" name="events" value="all"${values.events !== 'selected' ? html` checked` : ''}> All events</label>
    <label><input type="radio" name="events" value="selected"${values.events === 'selected' ? html` checked` : ''}> Only these:</label>
    ${EVENT_CATALOG.map((event) => html`<label class="implies"><input type="checkbox" name="types" value="${event.type}"> <code>${event.type}</code> <span class="muted">${event.description}</span></label>`)}
  </fieldset>
  <button type="submit">Create webhook</button> <a href="${BASE}">Cancel</a>
</form>`, session);

  const secretShownOnce = (session: TeamSession, id: string, secret: string, title: string) => page(title, html`
<p class="notice"><strong>Copy this signing secret now.</strong> It is shown only once. Use it to verify the
<code>webhook-signature</code> header of each delivery (Standard Webhooks).</p>
<input id="webhook-secret" class="secret" readonly value="${secret}">
<button type="button" data-copy-target="webhook-secret" hidden>Copy</button>
<p><a href="${BASE}/${id}">Open the webhook</a> · <a href="${BASE}">Back to Webhooks</a></p>`, session);

  server.get(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const webhooks = await listWebhooks(db, session.team.id);
    return sendPage(reply, page('Webhooks', html`
<p>teaminfra posts signed events to your endpoints when something happens. <a class="button" href="${BASE}/new">Create a webhook</a></p>
${webhooks.filter((hook) => hook.enabled === 0 && hook.disabled_reason).map((hook) => html`<p class="error" role="alert">${hook.url}: ${hook.disabled_reason}</p>`)}
<table><thead><tr><th>URL</th><th>Description</th><th>Events</th><th>State</th></tr></thead><tbody>
${webhooks.map((hook) => html`<tr><td><a href="${BASE}/${hook.id}">${hook.url}</a></td><td>${hook.description}</td>
  <td>${hook.event_types === '*' ? 'All events' : hook.event_types.split(',').join(', ')}</td>
  <td class="state">${hook.enabled ? (hook.failing_since ? `failing since ${hook.failing_since.slice(0, 16).replace('T', ' ')} UTC` : 'enabled') : 'disabled'}</td></tr>`)}
</tbody></table>`, session));
  });

  server.get(`${BASE}/new`, async (request, reply) => {
    const session = await manager(request, reply);
    return session ? sendPage(reply, form(session, {})) : reply;
  });

  server.post<{ Body: Body }>(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const body = request.body ?? {};
    const types = body.types === undefined ? [] : Array.isArray(body.types) ? body.types : [body.types];
    try {
      const created = await createWebhook(db, config, app.secrets, {
        teamId: session.team.id, url: String(body.url ?? '').trim(), description: String(body.description ?? '').trim(),
        eventTypes: body.events === 'selected' ? types : '*',
      });
      audit(session, 'create_webhook', created.id);
      return sendPage(reply, secretShownOnce(session, created.id, created.secret, 'Webhook created'), 201);
    } catch (error) {
      if (error instanceof WebhookRefusal) return sendPage(reply, form(session, body, error.message), 422);
      throw error;
    }
  });

  server.get<{ Params: { id: string } }>(`${BASE}/:id`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const hook = await ownWebhook(session, request.params.id);
    const deliveries = await listRecentDeliveries(db, hook.id);
    const action = (path: string, label: string, danger = false) => html`<form method="post" action="${BASE}/${hook.id}/${path}" class="inline">${csrfField(session)}<button${danger ? html` class="danger"` : ''} type="submit">${label}</button></form>`;
    return sendPage(reply, page(`Webhook ${hook.url}`, html`
${hook.enabled === 0 ? html`<p class="error" role="alert">Disabled. ${hook.disabled_reason ?? ''}</p>` : ''}
${hook.previous_secret_expires_at && hook.previous_secret_expires_at > new Date().toISOString() ? html`<p class="notice">The previous secret also signs deliveries until ${hook.previous_secret_expires_at.slice(0, 16).replace('T', ' ')} UTC.</p>` : ''}
<p>${action('test', 'Send test event')} ${action('rotate', 'Rotate signing secret')}
${hook.enabled ? action('disable', 'Disable') : action('enable', 'Enable')} ${action('delete', 'Delete', true)}</p>
<h2>Recent deliveries</h2>
<table><thead><tr><th>Event</th><th>State</th><th>Attempts</th><th>Status</th><th>Duration</th><th>Response</th><th></th></tr></thead><tbody>
${deliveries.map((delivery) => html`<tr data-delivery-id="${delivery.id}"><td><code>${delivery.type}</code><div class="muted">${delivery.event_id}</div></td>
  <td class="state">${delivery.state}${delivery.state === 'pending' && delivery.attempts > 0 ? html`<div class="muted">next try ${delivery.next_attempt_at.slice(0, 19).replace('T', ' ')} UTC</div>` : ''}</td>
  <td>${delivery.attempts}</td><td>${delivery.last_status ?? ''}</td>
  <td>${delivery.last_duration_ms !== null ? `${delivery.last_duration_ms} ms` : ''}</td>
  <td><code>${(delivery.last_response_excerpt ?? delivery.last_error ?? '').slice(0, 200)}</code></td>
  <td>${action(`deliveries/${delivery.id}/redeliver`, 'Redeliver')}</td></tr>`)}
</tbody></table>`, session));
  });

  const simple: Record<string, (session: TeamSession, id: string) => Promise<void>> = {
    test: async (session, id) => { await sendTestEvent(db, session.team.id, id); },
    disable: (_session, id) => setWebhookEnabled(db, id, false, 'Disabled by a team member.'),
    enable: (_session, id) => setWebhookEnabled(db, id, true, null),
  };
  for (const [path, perform] of Object.entries(simple)) {
    server.post<{ Params: { id: string } }>(`${BASE}/:id/${path}`, async (request, reply) => {
      const session = await manager(request, reply);
      if (!session) return reply;
      requireCsrf(session, request);
      const hook = await ownWebhook(session, request.params.id);
      await perform(session, hook.id);
      audit(session, `${path}_webhook`, hook.id);
      return reply.redirect(`${BASE}/${hook.id}`, 303);
    });
  }

  server.post<{ Params: { id: string } }>(`${BASE}/:id/rotate`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const hook = await ownWebhook(session, request.params.id);
    const secret = await rotateWebhookSecret(db, app.secrets, hook.id);
    audit(session, 'rotate_webhook_secret', hook.id);
    return sendPage(reply, secretShownOnce(session, hook.id, secret, 'Signing secret rotated'));
  });

  server.post<{ Params: { id: string } }>(`${BASE}/:id/delete`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const hook = await ownWebhook(session, request.params.id);
    await deleteWebhook(db, hook.id);
    audit(session, 'delete_webhook', hook.id);
    return reply.redirect(BASE, 303);
  });

  server.post<{ Params: { id: string; deliveryId: string } }>(`${BASE}/:id/deliveries/:deliveryId/redeliver`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const hook = await ownWebhook(session, request.params.id);
    if (!(await redeliver(db, hook.id, request.params.deliveryId))) throw new PanelRefusal(404, 'No such delivery', 'This delivery does not belong to this webhook.');
    audit(session, 'redeliver_webhook', hook.id);
    return reply.redirect(`${BASE}/${hook.id}`, 303);
  });
}
