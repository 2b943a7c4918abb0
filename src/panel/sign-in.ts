// Sign-in, team choice and sign-out. Failed sign-ins are throttled and audited; the same answer
// is given for an unknown email and a wrong password.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { verifyPassword } from '../auth/password.js';
import {
  activeTeamsOf, createSession, deleteSession, deleteSessionOfCookie, setSessionTeam, type PanelSession,
} from '../db/repositories/panel-sessions.js';
import { findUserByEmail } from '../db/repositories/teams.js';
import { nowIso } from '../db/ids.js';
import { html } from './html.js';
import { page, sendPage, csrfField } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { currentSession, PanelRefusal, requireCsrf, SESSION_COOKIE } from './session-guard.js';
import { SignInThrottle } from './sign-in-throttle.js';

const SIGN_IN_COOKIE = 'teaminfra_signin';
// Compared against when the email is unknown, so both paths cost one scrypt.
const DUMMY_HASH = 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA$Zm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm9vZm8';

export function registerSignIn(server: FastifyInstance, app: App): void {
  // Five tries per email; more per address, since an office shares one.
  const perEmail = new SignInThrottle(5);
  const perAddress = new SignInThrottle(50);
  const db = app.db.kysely;

  server.get<{ Querystring: { next?: string } }>('/panel/sign-in', (request, reply) =>
    signInForm(reply, safeNext(request.query.next)));

  server.post<{ Body: Record<string, string | undefined> }>('/panel/sign-in', async (request, reply) => {
    const body = request.body ?? {};
    const next = safeNext(body.next);
    if (!sameSecret(request.cookies[SIGN_IN_COOKIE], body._signin)) {
      return signInForm(reply, next, 'This form expired. Please sign in again.', 403);
    }
    const email = String(body.email ?? '').trim().toLowerCase();
    const wait = Math.max(perEmail.waitSeconds(email), perAddress.waitSeconds(request.ip));
    if (wait > 0) {
      void reply.header('Retry-After', String(wait));
      return signInForm(reply, next, `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minutes.`, 429);
    }
    const user = email ? await findUserByEmail(db, email) : undefined;
    const passwordOk = await verifyPassword(String(body.password ?? ''), user?.password_hash ?? DUMMY_HASH);
    const teams = user && passwordOk ? await activeTeamsOf(db, user.id) : [];
    if (!user || !passwordOk || teams.length === 0) {
      perEmail.failed(email);
      perAddress.failed(request.ip);
      panelAudit(app, { teamId: null, userId: user?.id ?? null, action: 'sign_in', outcome: 'denied', detail: email.slice(0, 200) });
      return signInForm(reply, next, 'The email or password is not right.', 401);
    }
    perEmail.succeeded(email);
    // The browser keeps one session cookie: the session it replaces would otherwise stay valid on
    // the server until it expires, usable by whoever copied that cookie.
    const earlier = request.cookies[SESSION_COOKIE];
    if (earlier) await deleteSessionOfCookie(db, earlier);
    await db.updateTable('users').set({ last_sign_in_at: nowIso() }).where('id', '=', user.id).execute();
    const onlyTeam = teams.length === 1 ? (teams[0] as { id: string }).id : null;
    const value = await createSession(db, user.id, onlyTeam);
    panelAudit(app, { teamId: onlyTeam, userId: user.id, action: 'sign_in', outcome: 'allowed' });
    void reply.setCookie(SESSION_COOKIE, value, cookieOptions(request)).clearCookie(SIGN_IN_COOKIE, { path: '/panel' });
    return reply.redirect(onlyTeam ? next : '/panel/teams', 303);
  });

  server.get('/panel/teams', async (request, reply) => {
    const session = await currentSession(db, request);
    if (!session) return reply.redirect('/panel/sign-in');
    return sendPage(reply, teamPicker(session, await activeTeamsOf(db, session.userId)));
  });

  server.post<{ Body: Record<string, string | undefined> }>('/panel/teams', async (request, reply) => {
    const session = await currentSession(db, request);
    if (!session) return reply.redirect('/panel/sign-in', 303);
    requireCsrf(session, request);
    const teams = await activeTeamsOf(db, session.userId);
    const chosen = teams.find((team) => team.id === request.body?.team_id);
    if (!chosen) throw new PanelRefusal(404, 'No such team', 'You are not a member of that team.');
    await setSessionTeam(db, session.idHash, chosen.id);
    panelAudit(app, { teamId: chosen.id, userId: session.userId, action: 'select_team', outcome: 'allowed' });
    return reply.redirect('/panel', 303);
  });

  server.post('/panel/sign-out', async (request, reply) => {
    const session = await currentSession(db, request);
    if (session) {
      requireCsrf(session, request);
      await deleteSession(db, session.idHash);
      panelAudit(app, { teamId: session.team?.id ?? null, userId: session.userId, action: 'sign_out', outcome: 'allowed' });
    }
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/panel/sign-in', 303);
  });
}

export function cookieOptions(request: FastifyRequest) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: request.protocol === 'https', maxAge: 12 * 3600 };
}

function signInForm(reply: FastifyReply, next: string, error?: string, status = 200): FastifyReply {
  const secret = randomBytes(18).toString('base64url');
  void reply.setCookie(SIGN_IN_COOKIE, secret, { path: '/panel', httpOnly: true, sameSite: 'strict', secure: reply.request.protocol === 'https', maxAge: 3600 });
  return sendPage(reply, page('Sign in', html`
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/panel/sign-in">
  <input type="hidden" name="_signin" value="${secret}">
  <input type="hidden" name="next" value="${next}">
  <label>Email <input type="email" name="email" autocomplete="username" required></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>`), status);
}

function teamPicker(session: PanelSession, teams: { id: string; name: string; role: string }[]) {
  return page('Choose a team', html`
<p>You are a member of several teams. Which one do you want to work in?</p>
<form method="post" action="/panel/teams">
  ${csrfField(session)}
  ${teams.map((team) => html`<label><input type="radio" name="team_id" value="${team.id}" required> ${team.name} <span class="muted">(${team.role})</span></label>`)}
  <button type="submit">Continue</button>
</form>`, session);
}

/** Only local panel paths, so the sign-in form cannot be used as an open redirect. */
function safeNext(next: string | undefined): string {
  return typeof next === 'string' && /^\/panel(\/[\w\-/]*)?(\?[\w=&%-]*)?$/.test(next) ? next : '/panel';
}

function sameSecret(cookie: string | undefined, field: string | undefined): boolean {
  if (!cookie || !field || cookie.length !== field.length) return false;
  return timingSafeEqual(Buffer.from(cookie), Buffer.from(field));
}
