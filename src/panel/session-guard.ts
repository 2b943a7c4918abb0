// Who is signed in to the panel, and the one place that checks panel roles and CSRF.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { findSession, type PanelSession } from '../db/repositories/panel-sessions.js';
import type { AppError } from '../core/errors.js';
import type { Database, Role } from '../db/tables.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';

export const SESSION_COOKIE = 'teaminfra_session';

/** A signed-in session with a team chosen. */
export type TeamSession = PanelSession & { team: NonNullable<PanelSession['team']> };

export class PanelRefusal extends Error {
  constructor(readonly status: number, readonly title: string, readonly sentence: string) {
    super(sentence);
  }
}

export async function currentSession(db: Kysely<Database>, request: FastifyRequest): Promise<PanelSession | undefined> {
  const value = request.cookies[SESSION_COOKIE];
  return value ? findSession(db, value) : undefined;
}

/** A signed-in session with a team chosen, or a redirect to sign in / pick a team. */
export async function requireTeamSession(db: Kysely<Database>, request: FastifyRequest, reply: FastifyReply): Promise<TeamSession | undefined> {
  const session = await currentSession(db, request);
  if (!session) {
    void reply.redirect(`/panel/sign-in?next=${encodeURIComponent(request.url)}`);
    return undefined;
  }
  if (!session.team) {
    void reply.redirect('/panel/teams');
    return undefined;
  }
  return session as TeamSession;
}

export function requireRole(session: TeamSession, roles: readonly Role[], what: string): void {
  if (!roles.includes(session.team.role)) {
    throw new PanelRefusal(403, 'Not allowed',
      `Only owners and admins of ${session.team.name} can open ${what}. You are a ${session.team.role}; ask an owner or admin.`);
  }
}

/** Every form carries the session's CSRF secret; a POST without it changes nothing. */
export function requireCsrf(session: PanelSession, request: FastifyRequest): void {
  const sent = (request.body as Record<string, unknown> | undefined)?._csrf;
  const expected = Buffer.from(session.csrfSecret);
  const given = Buffer.from(typeof sent === 'string' ? sent : '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new PanelRefusal(403, 'Form expired', 'This form was not sent from the panel, or it expired. Go back, reload the page and try again.');
  }
}

const REFUSAL_TITLES: Partial<Record<number, string>> = { 400: 'Not done', 403: 'Not allowed', 404: 'Not found', 409: 'Not done now' };

/**
 * What invoke() refused a member's call with, as the panel says it: the same status and sentence
 * as the API's (the internal cause never reaches it: AppError keeps that apart).
 */
export function refusalOfAppError(error: AppError): PanelRefusal {
  return new PanelRefusal(error.status, REFUSAL_TITLES[error.status] ?? error.title, error.detail);
}

export function sendRefusal(reply: FastifyReply, refusal: PanelRefusal, session?: PanelSession): FastifyReply {
  return sendPage(reply, page(refusal.title, html`<p class="error">${refusal.sentence}</p><p><a href="/panel">Back to the overview</a></p>`, session), refusal.status);
}
