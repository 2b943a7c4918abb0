// Developer > API Tokens: the only place where tokens are created, changed and revoked.
// Owners and admins only. A token value is shown once, on the page that created it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { isExpired } from '../auth/expiry.js';
import { PERMISSIONS, parseStoredPermissions } from '../auth/permissions.js';
import { createToken, revokeToken } from '../db/repositories/tokens.js';
import {
  findTeamToken, listTeamTokens, replaceToken, updateTokenAccess, type AccessSettings, type TeamTokenRow,
} from '../db/repositories/token-admin.js';
import { APPROVABLE_ACTION_TITLES, isApprovableAction, parseNeedsApproval } from '../decisions/approvable.js';
import { html } from './html.js';
import { choiceNames, knownChoices, tokenChoices } from './token-choices.js';
import { csrfField, page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { PanelRefusal, requireCsrf, requireRole, requireTeamSession, type TeamSession } from './session-guard.js';
import { parseTokenForm, settingsAsForm, tokenFormFields, type Choices, type FormBody } from './token-form.js';

const BASE = '/panel/developer/api-tokens';
const MANAGERS = ['owner', 'admin'] as const;
const SOURCE_LABELS: Record<string, string> = { panel: 'Panel', cli: 'Command-line sign-in', assistant: 'AI assistant sign-in', legacy: 'Legacy' };
const ACCEPTED_LABELS: Record<string, string> = { api: 'REST API and command line', mcp: 'MCP server', both: 'REST API, command line and MCP server' };

export function registerApiTokensPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function manager(request: FastifyRequest, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (session) requireRole(session, MANAGERS, 'the API Tokens page');
    return session;
  }

  const choicesFor = (teamId: string, values: FormBody = {}): Promise<Choices> => tokenChoices(db, teamId, values);

  server.get(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const tokens = await listTeamTokens(db, session.team.id);
    // Names of the services and servers these rows are limited to, read by key: never the whole team.
    const names = await choiceNames(db, session.team.id,
      tokens.flatMap((token) => (token.restrict_services ? token.serviceIds : [])), tokens.flatMap((token) => (token.restrict_servers ? token.serverIds : [])));
    return sendPage(reply, page('API Tokens', html`
<p>Tokens belong to the team and keep working after the member who created them leaves.
They are managed only here, never through the API or the MCP server.</p>
<p><a class="button" href="${BASE}/new">Create a token</a></p>
<table>
  <thead><tr><th>Name</th><th>Source</th><th>Created by</th><th>Accepted by</th><th>Access</th><th>Expires on</th><th>Last used</th><th>State</th><th></th></tr></thead>
  <tbody>
  ${tokens.map((token) => {
    const state = stateOf(token, session.team.timezone);
    return html`<tr data-token-id="${token.id}">
      <td>${token.name}<div class="muted">${token.token_prefix}…${token.token_last_four}</div></td>
      <td>${SOURCE_LABELS[token.source] ?? token.source}${token.assistant_name ? html`<div class="muted">${token.assistant_name}</div>` : ''}</td>
      <td>${token.creator_email ?? html`<span class="muted">—</span>`}${token.creator_removed_at ? html` <span class="muted">(removed from the team)</span>` : ''}</td>
      <td>${ACCEPTED_LABELS[token.accepted_by]}</td>
      <td>${accessSummary(token, names)}</td>
      <td>${token.expires_on ?? 'Never'}</td>
      <td>${token.last_used_at ? html`${token.last_used_at.slice(0, 16).replace('T', ' ')} UTC<div class="muted">${token.last_used_channel === 'mcp' ? 'MCP server' : 'REST API'}</div>` : 'Never'}</td>
      <td class="state">${state}</td>
      <td><a href="/panel/activity?token=${token.id}">Activity</a>${state === 'revoked' ? '' : html`<br><a href="${BASE}/${token.id}/edit">Edit access</a><br><a href="${BASE}/${token.id}/replace">Replace</a><br><a href="${BASE}/${token.id}/revoke">Revoke</a>`}</td>
    </tr>`;
  })}
  </tbody>
</table>`, session));
  });

  server.get(`${BASE}/new`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    return sendPage(reply, createPage(session, {}, await choicesFor(session.team.id), []));
  });

  server.post<{ Body: FormBody }>(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const body = request.body ?? {};
    // "Find" (scripts off): the same form again, with the matches of its search fields.
    if (body.find) return sendPage(reply, createPage(session, body, await choicesFor(session.team.id, body), []));
    const { settings, errors } = parseTokenForm(body, await knownChoices(db, session.team.id, body), session.team.timezone);
    if (!settings) return sendPage(reply, createPage(session, body, await choicesFor(session.team.id, body), errors), 422);
    const token = await createToken(db, { ...settings, teamId: session.team.id, source: 'panel', createdByUserId: session.userId });
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'create_token', outcome: 'allowed', targetId: token.id });
    return sendPage(reply, valueShownOnce(session, settings.name, token.value), 201);
  });

  server.get<{ Params: { id: string } }>(`${BASE}/:id/edit`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const token = await liveToken(session.team.id, request.params.id);
    const values = settingsAsForm(settingsOf(token));
    return sendPage(reply, editPage(session, token, values, await choicesFor(session.team.id, values), []));
  });

  server.post<{ Params: { id: string }; Body: FormBody }>(`${BASE}/:id/edit`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const token = await liveToken(session.team.id, request.params.id);
    const body = request.body ?? {};
    if (body.find) return sendPage(reply, editPage(session, token, body, await choicesFor(session.team.id, body), []));
    const { settings, errors } = parseTokenForm(body, await knownChoices(db, session.team.id, body), session.team.timezone);
    if (!settings) return sendPage(reply, editPage(session, token, body, await choicesFor(session.team.id, body), errors), 422);
    await updateTokenAccess(db, token.id, settings);
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'update_token_access', outcome: 'allowed', targetId: token.id });
    return reply.redirect(BASE, 303);
  });

  server.get<{ Params: { id: string } }>(`${BASE}/:id/revoke`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const token = await liveToken(session.team.id, request.params.id);
    return sendPage(reply, page('Revoke a token', html`
<p>Revoke “${token.name}” (${token.token_prefix}…${token.token_last_four})? It stops working at once, everywhere. This cannot be undone.</p>
<form method="post" action="${BASE}/${token.id}/revoke">${csrfField(session)}
<button class="danger" type="submit">Revoke token</button> <a href="${BASE}">Cancel</a></form>`, session));
  });

  server.post<{ Params: { id: string } }>(`${BASE}/:id/revoke`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const token = await liveToken(session.team.id, request.params.id);
    await revokeToken(db, token.id);
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'revoke_token', outcome: 'allowed', targetId: token.id });
    return reply.redirect(BASE, 303);
  });

  server.get<{ Params: { id: string } }>(`${BASE}/:id/replace`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const token = await liveToken(session.team.id, request.params.id);
    return sendPage(reply, page('Replace a token', html`
<p>Replace “${token.name}” (${token.token_prefix}…${token.token_last_four}) if you believe its value is compromised.
The current value stops working at once; a new token with the same name and settings is created and its value is shown once.</p>
<form method="post" action="${BASE}/${token.id}/replace">${csrfField(session)}
<button class="danger" type="submit">Revoke and replace</button> <a href="${BASE}">Cancel</a></form>`, session));
  });

  server.post<{ Params: { id: string } }>(`${BASE}/:id/replace`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const token = await liveToken(session.team.id, request.params.id);
    const replacement = await replaceToken(db, token, session.team.id, session.userId);
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'replace_token', outcome: 'allowed', targetId: token.id, detail: `replaced by ${replacement.id}` });
    return sendPage(reply, valueShownOnce(session, token.name, replacement.value), 201);
  });

  async function liveToken(teamId: string, tokenId: string): Promise<TeamTokenRow> {
    const token = await findTeamToken(db, teamId, tokenId);
    if (!token || token.revoked_at) throw new PanelRefusal(404, 'No such token', 'This token does not exist in your team, or it was revoked.');
    return token;
  }
}

function valueShownOnce(session: TeamSession, name: string, value: string) {
  return page('Token created', html`
<p class="notice"><strong>Copy this token now.</strong> It is shown only once; store it somewhere secure.</p>
<p><label for="token-value">Token value for “${name}”</label>
<input id="token-value" class="secret" readonly value="${value}">
<button type="button" data-copy-target="token-value" hidden>Copy</button></p>
<p><a href="${BASE}">Back to API Tokens</a></p>`, session);
}

function createPage(session: TeamSession, values: FormBody, choices: Choices, errors: string[]) {
  return page('Create an API token', html`${errors.map((error) => html`<p class="error" role="alert">${error}</p>`)}
<form method="post" action="${BASE}">${csrfField(session)}${tokenFormFields(values, choices)}
<button type="submit">Create token</button> <a href="${BASE}">Cancel</a></form>`, session);
}

function editPage(session: TeamSession, token: TeamTokenRow, values: FormBody, choices: Choices, errors: string[]) {
  return page(`Edit access: ${token.name}`, html`${errors.map((error) => html`<p class="error" role="alert">${error}</p>`)}
<p class="muted">Changes apply on the token's next request. The token value stays the same.</p>
<form method="post" action="${BASE}/${token.id}/edit">${csrfField(session)}${tokenFormFields(values, choices)}
<button type="submit">Save access</button> <a href="${BASE}">Cancel</a></form>`, session);
}

function settingsOf(token: TeamTokenRow): AccessSettings {
  return {
    name: token.name, expiresOn: token.expires_on, acceptedBy: token.accepted_by, fullAccess: token.full_access === 1,
    permissions: parseStoredPermissions(token.permissions),
    serviceIds: token.restrict_services ? token.serviceIds : null, serverIds: token.restrict_servers ? token.serverIds : null,
    needsApproval: parseNeedsApproval(token.needs_approval),
  };
}

function stateOf(token: TeamTokenRow, timeZone: string): string {
  if (token.revoked_at) return 'revoked';
  return isExpired(token.expires_on, timeZone) ? 'expired' : 'active';
}

function accessSummary(token: TeamTokenRow, names: ReadonlyMap<string, string>) {
  const labels = token.full_access ? ['Full access']
    : parseStoredPermissions(token.permissions).map((id) => PERMISSIONS.find((permission) => permission.id === id)?.label ?? id);
  const nameOf = (id: string) => names.get(id) ?? id;
  const needsApproval = parseNeedsApproval(token.needs_approval)
    .map((name) => (isApprovableAction(name) ? APPROVABLE_ACTION_TITLES[name] : name));
  return html`${labels.join('; ')}
    ${token.restrict_services ? html`<div class="muted">Only ERP services: ${token.serviceIds.map(nameOf).join(', ') || 'none'}</div>` : ''}
    ${token.restrict_servers ? html`<div class="muted">Only servers: ${token.serverIds.map(nameOf).join(', ') || 'none'}</div>` : ''}
    ${needsApproval.length > 0 ? html`<div class="needs-approval">Needs approval for: ${needsApproval.join('; ')}</div>` : ''}`;
}
