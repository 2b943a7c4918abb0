// Activity (owners and admins): the team's activity trail, as list_activity answers it to a token
// with full access, filtered the same way (token, service, action, outcome, dates) and read a page
// at a time, newest first. Each token's row on the API Tokens page links here with its filter.
// It answers what the API answers: a service that is not the team's (another team's, deleted,
// never made) is 404, and a date that is not on the calendar is not understood (Instant).
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { ACTION_NAME, listActivity, listTokensToFilterBy, type ActivityFilters, type ActivityRow } from '../db/repositories/activity.js';
import { encodeCursor } from '../db/pagination.js';
import { findReachableService } from '../db/repositories/services.js';
import { Instant } from '../../tools/schemas.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { PanelRefusal, requireRole, requireTeamSession } from './session-guard.js';

export const ACTIVITY_PATH = '/panel/activity';
const PAGE_SIZE = 50;
// Enough for any team's tokens; a bound all the same, so that the page stays small (issue 28).
const TOKEN_CHOICES = 500;
const OUTCOMES = ['allowed', 'denied', 'failed'] as const;
const CHANNEL_LABELS: Record<string, string> = {
  api: 'REST API', mcp: 'MCP', panel: 'Panel', cli: 'Operator',
  // The schedule acted; the actor shown is who last changed it (src/engine/backup-removal-entry.ts).
  schedule: 'Backup schedule (last changed by the actor shown)', retention: 'Backup retention',
};
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** A day as the date inputs send it, on the calendar. */
const isDay = (value: string) => DATE.test(value) && Instant().safeParse(value).success;

type Query = Partial<Record<'token' | 'service' | 'action' | 'outcome' | 'from' | 'to' | 'cursor', string>>;

/** The filters of the query string, or the sentence saying which one is not understood. */
function filtersOf(query: Query): { filters: ActivityFilters; error?: string } {
  const filters: ActivityFilters = {};
  const bad: string[] = [];
  if (query.token) (/^tok_[0-9a-z]{20}$/.test(query.token) ? (filters.tokenId = query.token) : bad.push('token'));
  if (query.service) (/^svc_[0-9a-z]{20}$/.test(query.service) ? (filters.serviceId = query.service) : bad.push('service (an id, svc_...)'));
  if (query.action) (ACTION_NAME.test(query.action) ? (filters.action = query.action) : bad.push('action'));
  if (query.outcome) {
    const outcome = OUTCOMES.find((value) => value === query.outcome);
    if (outcome) filters.outcome = outcome; else bad.push('outcome');
  }
  if (query.from) (isDay(query.from) ? (filters.since = query.from) : bad.push('from'));
  // "To" is a day the list includes: the trail is read up to the next midnight (UTC).
  if (query.to) (isDay(query.to) ? (filters.until = new Date(Date.parse(query.to) + 86_400_000).toISOString()) : bad.push('to'));
  return bad.length > 0 ? { filters, error: `These filters are not understood: ${bad.join(', ')}.` } : { filters };
}

function who(row: ActivityRow) {
  if (row.actor_type === 'token') return html`${row.token_name ?? row.actor_id}<div class="muted">token · ${row.token_source ?? 'removed'}</div>`;
  if (row.actor_type === 'user') return html`${row.user_email ?? row.actor_id}<div class="muted">member</div>`;
  return html`<span class="muted">${row.actor_type}</span>`;
}

export function registerActivityPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  server.get<{ Querystring: Query }>(ACTIVITY_PATH, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    requireRole(session, ['owner', 'admin'], 'the Activity page');
    const query = request.query ?? {};
    const { filters, error } = filtersOf(query);
    let rows: ActivityRow[] = [];
    let next: string | null = null;
    if (!error) {
      const reach = { teamId: session.team.id, tokenId: '', restrictServices: false, restrictServers: false };
      if (filters.serviceId && !(await findReachableService(db, reach, filters.serviceId))) {
        throw new PanelRefusal(404, 'No such ERP service', 'This ERP service does not exist in your team, or it was deleted.');
      }
      try {
        rows = await listActivity(db, reach, filters, { limit: PAGE_SIZE, cursor: query.cursor });
      } catch {
        // The one way a read fails on the caller's side: a cursor this page never wrote.
        return sendPage(reply, page('Activity', html`<p class="error" role="alert">This page link is out of date. <a href="${ACTIVITY_PATH}">Start again</a>.</p>`, session), 400);
      }
      if (rows.length > PAGE_SIZE) {
        rows = rows.slice(0, PAGE_SIZE);
        const kept = Object.fromEntries(Object.entries(query).filter(([name, value]) => name !== 'cursor' && value)) as Record<string, string>;
        next = `${ACTIVITY_PATH}?${new URLSearchParams({ ...kept, cursor: encodeCursor(rows.at(-1)!.id) }).toString()}`;
      }
    }
    const tokens = await listTokensToFilterBy(db, session.team.id, TOKEN_CHOICES);
    const selected = (value: string | undefined, option: string) => (value === option ? html` selected` : '');
    return sendPage(reply, page('Activity', html`
<p>Everything tokens and members of ${session.team.name} did, and every refusal, newest first: over the REST API, the MCP server and this panel.</p>
<form method="get" action="${ACTIVITY_PATH}" class="filters">
  <label>Token <select name="token"><option value="">Any</option>${tokens.map((token) => html`<option value="${token.id}"${selected(query.token, token.id)}>${token.name}${token.revoked_at ? ' (revoked)' : ''}</option>`)}</select></label>
  <label>ERP service id <input name="service" placeholder="svc_..." maxlength="24" value="${query.service ?? ''}"></label>
  <label>Action <input name="action" placeholder="start_erp_service" maxlength="100" value="${query.action ?? ''}"></label>
  <label>Outcome <select name="outcome"><option value="">Any</option>${OUTCOMES.map((outcome) => html`<option${selected(query.outcome, outcome)}>${outcome}</option>`)}</select></label>
  <label>From <input type="date" name="from" value="${query.from ?? ''}"></label>
  <label>To <input type="date" name="to" value="${query.to ?? ''}"></label>
  <button type="submit">Filter</button> <a href="${ACTIVITY_PATH}">Clear</a>
</form>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<table id="activity">
  <thead><tr><th>When (UTC)</th><th>Who</th><th>Channel</th><th>Action</th><th>Target</th><th>Outcome</th></tr></thead>
  <tbody>
  ${rows.map((row) => html`<tr data-entry-id="${row.id}">
    <td>${row.at.slice(0, 19).replace('T', ' ')}</td>
    <td>${who(row)}</td>
    <td>${CHANNEL_LABELS[row.channel] ?? row.channel}</td>
    <td><code>${row.action}</code></td>
    <td>${row.target_type && row.target_id ? html`${row.target_type} <code>${row.target_id}</code>` : html`<span class="muted">—</span>`}</td>
    <td class="outcome">${row.outcome}${row.code ? html`<div class="muted">${row.code}</div>` : ''}</td>
  </tr>`)}
  </tbody>
</table>
${rows.length === 0 && !error ? html`<p class="muted">No activity matches these filters.</p>` : ''}
<p>${query.cursor ? html`<a href="${ACTIVITY_PATH}?${new URLSearchParams(Object.entries(query).filter(([name, value]) => name !== 'cursor' && value) as [string, string][]).toString()}">Newest</a> ` : ''}${next ? html`<a rel="next" href="${next}">Older entries</a>` : ''}</p>`, session));
  });
}
