// The page shell every panel page shares: navigation, the sign-out form, styles and headers.
import type { FastifyReply } from 'fastify';
import type { PanelSession } from '../db/repositories/panel-sessions.js';
import { html, type Html } from './html.js';

// connect-src 'self': the token forms' search fields ask the panel for matches (token-choices.ts).
export const PANEL_CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function csrfField(session: PanelSession): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrfSecret}">`;
}

export function page(title: string, body: Html, session?: PanelSession): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · teaminfra</title>
<link rel="stylesheet" href="/panel/assets/panel.css">
</head>
<body>
<header>
  <strong>teaminfra</strong>
  ${session?.team ? html`<nav aria-label="Main">
    <a href="/panel">Overview</a>
    <a href="/panel/decisions">Decisions</a>
    <a href="/panel/members">Members</a>
    <a href="/panel/activity">Activity</a>
    ${session.team.role === 'member' ? '' : html`<a href="/panel/notifications">Notifications</a>`}
    <span>Developer:</span>
    <a href="/panel/developer/api-tokens">API Tokens</a>
    <a href="/panel/developer/webhooks">Webhooks</a>
    <a href="/panel/developer/backups">Backups</a>
  </nav>
  <span class="muted">${session.team.name} · ${session.email} (${session.team.role})</span>` : html`<nav></nav>`}
  ${session ? html`<form method="post" action="/panel/sign-out">${csrfField(session)}<button class="link" type="submit">Sign out</button></form>` : ''}
</header>
<main>
<h1>${title}</h1>
${body}
</main>
<script src="/panel/assets/panel.js"></script>
</body>
</html>`;
}

/** `csp`: the panel's policy, or one that allows a page a little more (a caught email's sandboxed frame). */
export function sendPage(reply: FastifyReply, markup: Html, status = 200, csp = PANEL_CSP): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('Content-Security-Policy', csp)
    .header('X-Frame-Options', 'DENY').header('Referrer-Policy', 'same-origin').send(markup.text);
}
