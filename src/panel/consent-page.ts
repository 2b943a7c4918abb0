// Approving a sign-in (/panel/oauth/:uid). The OAuth server sends the browser here when an
// assistant (authorization code flow) or the command line (device flow) asks for a token. An
// owner or admin of the team sees who asks and where the browser goes back to, chooses the
// access for an assistant, and approves or declines; a member is refused with a sentence.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { App } from '../app.js';
import { dateInTimeZone } from '../auth/expiry.js';
import { PERMISSIONS } from '../auth/permissions.js';
import type { Database } from '../db/tables.js';
import { parseNeedsApproval } from '../decisions/approvable.js';
import type { OAuthServer } from '../oauth/oauth-server.js';
import { approveSignIn, declineSignIn, pendingSignIn, SignInNotFound, type PendingSignIn } from '../oauth/interaction.js';
import { publicBaseOf } from '../oauth/public-base.js';
import { cliAccessSettings, deviceApprovalPage } from './device-page.js';
import { html, type Html } from './html.js';
import { csrfField, page, PANEL_CSP } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { PanelRefusal, requireCsrf, requireTeamSession, type TeamSession } from './session-guard.js';
import { knownChoices, tokenChoices } from './token-choices.js';
import {
  expiryField, nameField, needsApprovalField, parseTokenForm, permissionsField, restrictionFields, type Choices, type FormBody,
} from './token-form.js';

const MANAGERS = new Set(['owner', 'admin']);
const PERMISSION_LABELS = new Map<string, string>(PERMISSIONS.map((permission) => [permission.id, permission.label]));
/** Read-only, as the issue asks: an assistant gets more only when a person ticks it. */
const DEFAULT_PERMISSIONS = ['services:read', 'servers:read', 'backups:read'];
const DEFAULT_EXPIRY_DAYS = 90;

type Params = { Params: { uid: string } };

export function registerConsentPage(server: FastifyInstance, app: App, oauth: OAuthServer): void {
  const db = app.db.kysely;

  async function open(request: FastifyRequest<Params>, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return undefined;
    if (!MANAGERS.has(session.team.role)) {
      throw new PanelRefusal(403, 'Not allowed',
        `Only owners and admins of ${session.team.name} can approve a sign-in. You are a ${session.team.role}; ask an owner or admin to approve it.`);
    }
    const base = publicBaseOf(request, app.publicUrl);
    const instance = await oauth.instanceFor(base);
    let pending: PendingSignIn;
    try {
      pending = await pendingSignIn(instance, base, { req: request.raw, res: reply.raw });
    } catch (error) {
      if (!(error instanceof SignInNotFound)) throw error;
      throw notFound();
    }
    if (pending.uid !== request.params.uid) throw notFound();
    if (pending.withCode && pending.kind !== 'cli') {
      throw new PanelRefusal(400, 'Not possible', 'Only the teaminfra command line can sign in with a code. Sign the assistant in from its own settings instead.');
    }
    return { session, instance, pending };
  }

  server.get<Params>('/panel/oauth/:uid', async (request, reply) => {
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { session, pending } = opened;
    if (pending.kind === 'cli') return sendSignInPage(reply, deviceApprovalPage(session, pending), null);
    const values: FormBody = {
      // What the assistant asks for (a step-up names the permission a refused call needed) is offered ticked.
      name: pending.clientName, access: 'selected', permissions: [...new Set([...DEFAULT_PERMISSIONS, ...pending.requestedPermissions])],
      expires_on: dateInTimeZone(new Date(Date.now() + DEFAULT_EXPIRY_DAYS * 86_400_000), session.team.timezone),
      needs_approval: await approvalsOfLatestToken(db, session.team.id, pending.clientName),
    };
    return sendSignInPage(reply, consentPage(session, pending, values, await tokenChoices(db, session.team.id, values), []), pending);
  });

  server.post<Params & { Body: FormBody }>('/panel/oauth/:uid', async (request, reply) => {
    const opened = await open(request, reply);
    if (!opened) return reply;
    const { session, instance, pending } = opened;
    requireCsrf(session, request);
    const raw = { req: request.raw, res: reply.raw };
    const audit = (action: string) => panelAudit(app, {
      teamId: session.team.id, userId: session.userId, action, outcome: 'allowed', detail: `${pending.kind}: ${pending.clientName}`.slice(0, 200),
    });
    const body = request.body ?? {};
    // "Find" (scripts off) shows the form again with the matches of its search fields; it answers nothing.
    if (body.find && pending.kind === 'assistant') {
      return sendSignInPage(reply, consentPage(session, pending, body, await tokenChoices(db, session.team.id, body), []), pending);
    }
    if (body.decision !== 'approve') {
      audit('decline_sign_in');
      return reply.redirect(await declineSignIn(instance, raw, 'The sign-in was declined in the teaminfra panel.'), 303);
    }
    let settings = cliAccessSettings(dateInTimeZone(new Date(), session.team.timezone));
    if (pending.kind === 'assistant') {
      // "Accepted by" is not the person's to choose here: an assistant's token is for the MCP server.
      const parsed = parseTokenForm({ ...body, accepted_by: 'mcp' }, await knownChoices(db, session.team.id, body), session.team.timezone);
      if (!parsed.settings) {
        return sendSignInPage(reply, consentPage(session, pending, body, await tokenChoices(db, session.team.id, body), parsed.errors), pending, 422);
      }
      settings = { ...parsed.settings, acceptedBy: 'mcp' };
    }
    const next = await approveSignIn(instance, db, raw, pending, { userId: session.userId, teamId: session.team.id }, settings);
    audit('approve_sign_in');
    return reply.redirect(next, 303);
  });
}

/**
 * The actions that the team's newest live token of an assistant by this name needs approval
 * for: a step-up (or a new sign-in) then starts with them ticked, so asking for more access does
 * not quietly drop the approvals a person set. Matching on the name can only add approvals to
 * the form, never access, and the person still sees and decides every box.
 */
async function approvalsOfLatestToken(db: Kysely<Database>, teamId: string, assistantName: string): Promise<string[]> {
  const row = await db.selectFrom('api_tokens').select('needs_approval')
    .where('team_id', '=', teamId).where('source', '=', 'assistant').where('assistant_name', '=', assistantName)
    .where('revoked_at', 'is', null).orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
  return row ? parseNeedsApproval(row.needs_approval) : [];
}

function notFound(): PanelRefusal {
  return new PanelRefusal(404, 'No such sign-in',
    'This sign-in request has expired, was already answered, or was started in another browser. Start it again from the assistant or the command line.');
}

function consentPage(session: TeamSession, pending: PendingSignIn, values: FormBody, choices: Choices, errors: string[]): Html {
  return page('Sign in an AI assistant', html`${errors.map((error) => html`<p class="error" role="alert">${error}</p>`)}
<p><strong class="assistant-name">${pending.clientName}</strong> asks for a token to use the MCP server of <strong>${session.team.name}</strong>.
${pending.metadataDocumentHost ? html`Its description is published by <strong class="publisher">${pending.metadataDocumentHost}</strong>.
` : ''}After you decide, your browser goes back to <strong class="redirect-target">${pending.redirectTarget ?? 'the assistant'}</strong>.
Approve only if you started this sign-in from that assistant.</p>
${pending.requestedPermissions.length > 0 ? html`<p class="requested-permissions">It asks to be allowed to: ${pending.requestedPermissions.map((id) => PERMISSION_LABELS.get(id) ?? id).join('; ')}.</p>
` : ''}<p class="muted">Choose what it may do. The token is accepted by the MCP server only. It is listed on the API Tokens page,
where you can change its access or revoke it at any time.</p>
<form method="post" action="/panel/oauth/${pending.uid}">${csrfField(session)}
${nameField(values)}${permissionsField(values)}${restrictionFields(values, choices)}${needsApprovalField(values)}${expiryField(values)}
<button type="submit" name="decision" value="approve">Approve</button>
<button class="danger" type="submit" name="decision" value="decline">Decline</button>
</form>`, session);
}

/** A panel page whose form may also lead the browser on to the client's redirect URI. */
function sendSignInPage(reply: FastifyReply, markup: Html, pending: PendingSignIn | null, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8')
    .header('Content-Security-Policy', cspFor(pending))
    .header('X-Frame-Options', 'DENY').header('Referrer-Policy', 'same-origin').send(markup.text);
}

/**
 * Browsers apply form-action to the redirects that follow a form post, so the consent page also
 * allows the client's redirect URI (its origin, or its scheme for an app's own scheme).
 */
function cspFor(pending: PendingSignIn | null): string {
  const target = pending?.redirectOrigin;
  if (!target || !/^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.\-[\]:]+)?$/i.test(target)) return PANEL_CSP;
  return PANEL_CSP.replace("form-action 'self'", `form-action 'self' ${target}`);
}
