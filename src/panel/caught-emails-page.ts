// A copy's Caught emails in the panel (roles with mailcatcher:read): the list (from, to, subject,
// when), one email read as text, its HTML only inside a sandboxed frame (caught-email-html.ts),
// and its .eml through the same single-use link download_caught_email gives over MCP. Every read
// goes through invoke() as the member: reading an email (it may hold a reset link) is a row of
// the activity trail with the member as its actor, as it is for a token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { invoke } from '../core/invoke.js';
import downloadCaughtEmail from '../../tools/mailcatcher/download-caught-email.js';
import getCaughtEmail from '../../tools/mailcatcher/get-caught-email.js';
import listCaughtEmails from '../../tools/mailcatcher/list-caught-emails.js';
import { caughtEmailHtmlPath, EMAIL_PAGE_CSP } from './caught-email-html.js';
import { html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { memberCredentials } from './member-principal.js';
import { PanelRefusal, requireCsrf, requireTeamSession } from './session-guard.js';

export const caughtEmailsPath = (copyId: string) => `/panel/services/${copyId}/emails`;
const emailPath = (emailId: string) => `/panel/emails/${emailId}`;
const EMAILS_SHOWN = 50;
const COPY_ID = /^svc_[0-9a-z]{20}$/;
const EMAIL_ID = /^eml_[0-9a-z]{20}$/;
const when = (at: string) => `${at.slice(0, 19).replace('T', ' ')} UTC`;

export function registerCaughtEmailsPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  const emailIdOf = (id: string) => {
    if (!EMAIL_ID.test(id)) throw new PanelRefusal(404, 'No such email', 'This email does not exist in your team, or it was removed.');
    return id;
  };
  const copyOf = async (teamId: string, id: string) => (COPY_ID.test(id) ? db.selectFrom('erp_services').select(['id', 'name'])
    .where('id', '=', id).where('team_id', '=', teamId).where('deleted_at', 'is', null).executeTakeFirst() : undefined);

  server.get<{ Params: { id: string }; Querystring: { after?: string } }>('/panel/services/:id/emails', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const copy = await copyOf(session.team.id, request.params.id);
    if (!copy) throw new PanelRefusal(404, 'No such copy', 'This copy does not exist in your team, or it was deleted.');
    const after = typeof request.query.after === 'string' && request.query.after.length <= 200 ? request.query.after : undefined;
    const emails = await invoke(listCaughtEmails, { service_id: copy.id, limit: EMAILS_SHOWN, ...(after ? { cursor: after } : {}) }, memberCredentials(session), app);
    return sendPage(reply, page(`Caught emails of ${copy.name}`, html`
<p><a href="/panel/services/${copy.id}">← ${copy.name}</a></p>
<p class="muted">What this copy sent, kept here instead of delivered, newest first.</p>
${emails.data.length === 0 ? html`<p class="muted">${after ? 'No more emails.' : 'This copy has sent no email yet.'}</p>` : html`<table>
  <thead><tr><th>Received</th><th>From</th><th>To</th><th>Subject</th></tr></thead>
  <tbody>${emails.data.map((email) => html`<tr data-email-id="${email.id}"><td>${when(email.received_at)}</td><td>${email.sender ?? '—'}</td>
    <td>${email.recipients.join(', ')}</td><td><a href="${emailPath(email.id)}">${email.subject || '(no subject)'}</a></td></tr>`)}</tbody>
</table>`}
${emails.next_cursor ? html`<p><a href="${caughtEmailsPath(copy.id)}?after=${encodeURIComponent(emails.next_cursor)}">Older emails</a></p>` : ''}`, session));
  });

  server.get<{ Params: { id: string } }>('/panel/emails/:id', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const email = await invoke(getCaughtEmail, { email_id: emailIdOf(request.params.id) }, memberCredentials(session), app);
    const copy = await copyOf(session.team.id, email.copy_id);
    return sendPage(reply, page(email.subject || '(no subject)', html`
${copy ? html`<p><a href="${caughtEmailsPath(copy.id)}">← Caught emails of ${copy.name}</a></p>` : ''}
<table class="facts">
  <tr><th>From</th><td>${email.sender ?? '—'}</td></tr>
  <tr><th>To</th><td>${email.recipients.join(', ')}</td></tr>
  <tr><th>Received</th><td>${when(email.received_at)}</td></tr>
  ${email.attachments.length > 0 ? html`<tr><th>Attachments</th><td>${email.attachments.map((file) => html`<div>${file.filename ?? '(unnamed)'} <span class="muted">${file.content_type}, ${file.size_bytes} bytes</span></div>`)}</td></tr>` : ''}
</table>
<form method="post" action="${emailPath(email.id)}/download">${csrfField(session)}<button type="submit">Download .eml</button></form>
<h2>Text</h2>
${email.text_body ? html`<pre class="email-text">${email.text_body}</pre>` : html`<p class="muted">This email has no text part.</p>`}
${email.html_body ? html`<h2>HTML</h2>
<p class="muted">Shown in a sandbox: no script runs in it, nothing is fetched from elsewhere, and its links are not followed.</p>
<iframe class="email-html" sandbox="" referrerpolicy="no-referrer" title="The HTML part of the email" src="${caughtEmailHtmlPath(email.id)}"></iframe>` : ''}`, session), 200, EMAIL_PAGE_CSP);
  });

  server.post<{ Params: { id: string } }>('/panel/emails/:id/download', async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const link = await invoke(downloadCaughtEmail, { email_id: emailIdOf(request.params.id) }, memberCredentials(session), app);
    return reply.redirect(link.download_url, 303);
  });
}
