// Accepting an invitation: a new person sets a password; someone who already has an account
// confirms it with their current password (an invitation link never resets a password).
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { findOpenInvitation, markInvitationAccepted } from '../db/repositories/members.js';
import { findUserByEmail, upsertMember } from '../db/repositories/teams.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';

export function registerInvitationPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  const expired = () => page('Invitation', html`<p class="error">This invitation link is unknown, used or expired. Ask an owner or admin of the team for a new one.</p>`);
  const form = (value: string, teamName: string, email: string, hasAccount: boolean, error?: string) => page(`Join ${teamName}`, html`
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<p>You were invited to ${teamName} as ${email}.
${hasAccount ? 'You already have an account: confirm with your password.' : 'Choose a password to sign in with.'}</p>
<form method="post" action="/panel/invitations/${value}">
  <label>${hasAccount ? 'Your password' : 'Password (at least 12 characters)'}
    <input type="password" name="password" autocomplete="${hasAccount ? 'current-password' : 'new-password'}" required></label>
  <button type="submit">Join the team</button>
</form>`);

  server.get<{ Params: { value: string } }>('/panel/invitations/:value', async (request, reply) => {
    const invitation = await findOpenInvitation(db, request.params.value);
    if (!invitation) return sendPage(reply, expired(), 404);
    const existing = await findUserByEmail(db, invitation.email);
    return sendPage(reply, form(request.params.value, invitation.team_name, invitation.email, Boolean(existing?.password_hash)));
  });

  // The random value in the path is the credential, so this form needs no session CSRF token.
  server.post<{ Params: { value: string }; Body: { password?: string } }>('/panel/invitations/:value', async (request, reply) => {
    const invitation = await findOpenInvitation(db, request.params.value);
    if (!invitation) return sendPage(reply, expired(), 404);
    const password = String(request.body?.password ?? '');
    const existing = await findUserByEmail(db, invitation.email);
    const retry = (error: string) => sendPage(reply, form(request.params.value, invitation.team_name, invitation.email, Boolean(existing?.password_hash), error), 422);
    let passwordHash: string | null = null;
    if (existing?.password_hash) {
      if (!(await verifyPassword(password, existing.password_hash))) return retry('That is not the password of this account.');
    } else {
      if (password.length < 12) return retry('Choose a password of at least 12 characters.');
      passwordHash = await hashPassword(password);
    }
    const userId = await upsertMember(db, { teamId: invitation.team_id, email: invitation.email, role: invitation.role, passwordHash });
    await markInvitationAccepted(db, invitation.id_hash);
    panelAudit(app, { teamId: invitation.team_id, userId, action: 'accept_invitation', outcome: 'allowed', targetType: 'member', targetId: userId });
    return reply.redirect('/panel/sign-in', 303);
  });
}
