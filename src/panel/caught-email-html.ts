// The HTML part of a caught email, for the sandboxed frame of its panel page only. A copy's
// email is written by whoever controls the copy's data, so it is hostile until shown otherwise:
// - the frame is `sandbox=""` (no script, no form, no popup, no navigation of the panel, an
//   origin of its own), and this answer says `sandbox` again in its own policy, so that opened
//   on its own it is no less shut;
// - its policy fetches nothing: no image, style sheet, font or frame from anywhere (inline
//   styles and data: images only, which fetch nothing);
// - its links open in a new window (a base target), which the sandbox refuses, so a click does
//   nothing; and the email page's policy lets its frame show this server's pages only
//   (frame-src 'self'), so a link aimed at the frame itself, or a refresh, is stopped before a
//   request leaves the browser (the frame then shows the browser's error).
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { invoke } from '../core/invoke.js';
import getCaughtEmail from '../../tools/mailcatcher/get-caught-email.js';
import { PANEL_CSP } from './layout.js';
import { memberCredentials } from './member-principal.js';
import { PanelRefusal, requireTeamSession } from './session-guard.js';

export const caughtEmailHtmlPath = (emailId: string) => `/panel/emails/${emailId}/html`;

/** The email page's policy: the panel's, and a frame of this server (the email's HTML) besides. */
export const EMAIL_PAGE_CSP = `${PANEL_CSP}; frame-src 'self'`;

const EMAIL_HTML_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; " +
  "frame-ancestors 'self'; base-uri 'none'";
const EMAIL_ID = /^eml_[0-9a-z]{20}$/;

export function registerCaughtEmailHtml(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;
  server.get<{ Params: { id: string } }>('/panel/emails/:id/html', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    if (!EMAIL_ID.test(request.params.id)) throw new PanelRefusal(404, 'No such email', 'This email does not exist in your team, or it was removed.');
    const email = await invoke(getCaughtEmail, { email_id: request.params.id }, memberCredentials(session), app);
    return reply.code(200).type('text/html; charset=utf-8')
      .header('Content-Security-Policy', EMAIL_HTML_CSP).header('X-Frame-Options', 'SAMEORIGIN')
      .header('X-Content-Type-Options', 'nosniff').header('Referrer-Policy', 'no-referrer').header('X-DNS-Prefetch-Control', 'off')
      .header('Cache-Control', 'no-store')
      // The email's own markup, as sent: the policies, not a rewrite, keep it shut. The first base
      // element with a target wins, so its links open as popups, which the sandbox does not allow.
      .send(`<!doctype html><meta charset="utf-8"><base target="_blank">${email.html_body ?? ''}`);
  });
}
