// Members (owners and admins): list with role and last sign-in, invite, change a role, remove.
// Removing a member ends their panel sessions at once; the tokens they made keep working.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { plainTextProblem } from '../core/plain-text.js';
import { countOwners, createInvitation, listMembers, listOpenInvitations, removeMember, setRole } from '../db/repositories/members.js';
import type { Role } from '../db/tables.js';
import { html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { checkInvitationRole, checkMemberChange } from './member-rules.js';
import { panelAudit } from './panel-audit.js';
import { PanelRefusal, requireCsrf, requireRole, requireTeamSession, type TeamSession } from './session-guard.js';

const BASE = '/panel/members';
const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export function registerMembersPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function manager(request: FastifyRequest, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (session) requireRole(session, ['owner', 'admin'], 'the Members page');
    return session;
  }

  const render = async (session: TeamSession, notice?: ReturnType<typeof html>) => {
    const [members, invitations] = await Promise.all([listMembers(db, session.team.id), listOpenInvitations(db, session.team.id)]);
    return page('Members', html`${notice ?? ''}
<table>
  <thead><tr><th>Email</th><th>Role</th><th>Last sign-in</th><th>Change role</th><th></th></tr></thead>
  <tbody>${members.map((member) => html`<tr data-email="${member.email}">
    <td>${member.email}${member.user_id === session.userId ? html` <span class="muted">(you)</span>` : ''}</td>
    <td class="state">${member.role}</td>
    <td>${member.last_sign_in_at ? `${member.last_sign_in_at.slice(0, 16).replace('T', ' ')} UTC` : 'Never'}</td>
    <td><form method="post" action="${BASE}/${member.user_id}/role">${csrfField(session)}
      <select name="role" aria-label="Role of ${member.email}">${ROLES.map((role) => html`<option value="${role}"${role === member.role ? html` selected` : ''}>${role}</option>`)}</select>
      <button type="submit">Change role</button></form></td>
    <td><form method="post" action="${BASE}/${member.user_id}/remove">${csrfField(session)}<button class="danger" type="submit">Remove</button></form></td>
  </tr>`)}</tbody>
</table>
<h2>Invite someone</h2>
<form method="post" action="${BASE}/invitations">${csrfField(session)}
  <label>Email <input type="email" name="email" required></label>
  <label>Role <select name="role">${ROLES.map((role) => html`<option value="${role}"${role === 'member' ? html` selected` : ''}>${role}</option>`)}</select></label>
  <button type="submit">Create invitation link</button>
</form>
${invitations.length > 0 ? html`<h2>Open invitations</h2><ul>${invitations.map((invitation) => html`<li>${invitation.email} (${invitation.role}), valid until ${invitation.expires_at.slice(0, 10)}</li>`)}</ul>` : ''}`, session);
  };

  server.get(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    return session ? sendPage(reply, await render(session)) : reply;
  });

  server.post<{ Body: { email?: string; role?: string } }>(`${BASE}/invitations`, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const email = String(request.body?.email ?? '').trim().toLowerCase();
    const role = ROLES.find((candidate) => candidate === request.body?.role);
    if (!/^[^@\s]+@[^@\s]+$/.test(email) || !role) throw new PanelRefusal(422, 'Invalid invitation', 'Give an email address and a role.');
    const emailProblem = plainTextProblem(email);
    if (emailProblem) throw new PanelRefusal(422, 'Invalid invitation', `The email ${emailProblem}`);
    checkInvitationRole(session.team.role, role);
    const value = await createInvitation(db, { teamId: session.team.id, email, role, invitedBy: session.userId });
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'invite_member', outcome: 'allowed', detail: `${email} as ${role}` });
    const link = `${request.protocol}://${request.host}/panel/invitations/${value}`;
    return sendPage(reply, await render(session, html`<div class="notice"><p>Send this link to ${email}. It is valid for 7 days and works once;
      it is shown only now, since teaminfra sends no email of its own yet.</p>
      <input id="invitation-link" class="secret" readonly value="${link}">
      <button type="button" data-copy-target="invitation-link" hidden>Copy</button></div>`), 201);
  });

  async function change(request: FastifyRequest<{ Params: { userId: string }; Body: { role?: string } }>, reply: FastifyReply, removing: boolean) {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const members = await listMembers(db, session.team.id);
    const target = members.find((member) => member.user_id === request.params.userId);
    if (!target) throw new PanelRefusal(404, 'No such member', 'This person is not a member of your team.');
    const newRole = removing ? null : ROLES.find((role) => role === request.body?.role);
    if (!removing && !newRole) throw new PanelRefusal(422, 'Invalid role', 'Choose owner, admin or member.');
    checkMemberChange({
      actorRole: session.team.role, actorUserId: session.userId, targetUserId: target.user_id, targetRole: target.role,
      newRole: newRole ?? null, ownerCount: await countOwners(db, session.team.id),
    });
    if (newRole) await setRole(db, session.team.id, target.user_id, newRole);
    else await removeMember(db, session.team.id, target.user_id);
    panelAudit(app, {
      teamId: session.team.id, userId: session.userId, action: newRole ? 'change_member_role' : 'remove_member', outcome: 'allowed',
      targetType: 'member', targetId: target.user_id,
      detail: newRole ? `${target.email}: ${target.role} -> ${newRole}` : target.email,
    });
    return reply.redirect(target.user_id === session.userId && !newRole ? '/panel/sign-in' : BASE, 303);
  }

  server.post<{ Params: { userId: string }; Body: { role?: string } }>(`${BASE}/:userId/role`, (request, reply) => change(request, reply, false));
  server.post<{ Params: { userId: string }; Body: { role?: string } }>(`${BASE}/:userId/remove`, (request, reply) => change(request, reply, true));
}
