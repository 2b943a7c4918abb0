// Decisions (every member of the team: members reach all of the team's services in the panel):
// the questions tokens asked the team, pending ones first, each answerable with its options as
// buttons or in a free-text field; then the latest that ended. An answer goes through
// answerDecision(), the same rules as the API's answer_decision, so approving an action carries
// it out exactly as an answer through the API would. A refused answer (already answered,
// expired, not one of the options) is said in a sentence on the page, never as an error page.
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { AppError } from '../core/errors.js';
import { findDecision } from '../db/repositories/decisions.js';
import { nowIso } from '../db/ids.js';
import { answerDecision, MAX_FREE_TEXT_ANSWER } from '../decisions/answering.js';
import { teamDecisionEntries, type DecisionEntry } from './decision-entries.js';
import { html, type Html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { PanelRefusal, requireCsrf, requireTeamSession, type TeamSession } from './session-guard.js';

export const DECISIONS_PATH = '/panel/decisions';
const CHANNELS: Record<string, string> = { api: 'REST API', mcp: 'MCP server', panel: 'panel' };

/** A refused answer, said above the list; the text typed into a free-text field is kept. */
interface Refusal { decisionId: string; sentence: string; answer: string }

export function registerDecisionsPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function render(session: TeamSession, notice: { answeredId?: string; refusal?: Refusal } = {}): Promise<Html> {
    const { pending, history } = await teamDecisionEntries(db, session.team.id, nowIso());
    const answered = history.find((entry) => entry.row.id === notice.answeredId && entry.row.state === 'answered');
    return page('Decisions', html`
${notice.refusal ? html`<p class="error" role="alert">${notice.refusal.sentence}</p>` : ''}
${answered ? html`<p class="notice" role="status">Answered “${answered.row.question}”: ${answered.row.answer}.${answered.approval
      ? ` Operation ${answered.approval.operationId} is now ${answered.approval.operationState ?? 'gone'}.` : ''}</p>` : ''}
<p>Questions API tokens (usually AI assistants) ask the team, and actions of tokens that need approval. Any member can
answer; the token that asked never can.</p>
<h2>Pending</h2>
${pending.length === 0 ? html`<p class="muted">Nothing waits for an answer.</p>`
      : pending.map((entry) => pendingCard(session, entry, notice.refusal?.decisionId === entry.row.id ? notice.refusal.answer : ''))}
<h2>History</h2>
${history.length === 0 ? html`<p class="muted">No decision has ended yet.</p>` : historyTable(history)}`, session);
  }

  server.get<{ Querystring: { answered?: string } }>(DECISIONS_PATH, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    return sendPage(reply, await render(session, { answeredId: String(request.query.answered ?? '') }));
  });

  server.post<{ Params: { id: string }; Body: { answer?: string | string[] } }>(`${DECISIONS_PATH}/:id/answer`, async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const decision = await findDecision(db, request.params.id);
    if (!decision || decision.team_id !== session.team.id) {
      throw new PanelRefusal(404, 'No such decision', 'This decision does not exist in your team.');
    }
    // One answer per form; anything else (a forged form with two) is no answer at all. Browsers
    // send a textarea's line breaks as CRLF; the answer keeps them as the API would (LF).
    const answer = typeof request.body?.answer === 'string' ? request.body.answer.replace(/\r\n?/g, '\n') : '';
    const audit = (outcome: 'allowed' | 'denied', code?: string) => panelAudit(app, {
      teamId: session.team.id, userId: session.userId, action: 'answer_decision', outcome, targetType: 'decision',
      targetId: decision.id, ...(code ? { code } : {}), detail: `answer: ${answer.trim()}`.slice(0, 200),
    });
    try {
      await answerDecision(app, decision, answer, { type: 'member', userId: session.userId, channel: 'panel' });
    } catch (error) {
      if (!(error instanceof AppError) || error.code === 'internal') throw error;
      audit('denied', error.code);
      const refusal = { decisionId: decision.id, sentence: error.detail, answer };
      return sendPage(reply, await render(session, { refusal }), error.code === 'validation_failed' ? 422 : error.status);
    }
    audit('allowed');
    return reply.redirect(`${DECISIONS_PATH}?answered=${encodeURIComponent(decision.id)}`, 303);
  });
}

function pendingCard(session: TeamSession, entry: DecisionEntry, typedAnswer: string): Html {
  const { row, approval } = entry;
  return html`<section class="decision" id="${row.id}" data-decision-id="${row.id}">
  <h3 class="question">${row.question}</h3>
  ${row.context ? html`<p class="context">${row.context}</p>` : ''}
  <ul class="muted">
    ${entry.serviceName ? html`<li>About ERP service <strong>${entry.serviceName}</strong></li>` : ''}
    ${approval ? html`<li class="approval">Action: <strong>${approval.title}</strong> <code>${approval.capability}</code> on ${approval.target};
      operation <code>${approval.operationId}</code> (${approval.operationState ?? 'gone'})</li>` : ''}
    <li>Asked by API token <strong>${entry.askedBy.name}</strong> over the ${CHANNELS[entry.askedBy.channel] ?? entry.askedBy.channel}, ${utc(row.created_at)}</li>
    <li>Expires ${utc(row.expires_at)}</li>
  </ul>
  <form method="post" action="${DECISIONS_PATH}/${row.id}/answer">${csrfField(session)}
  ${entry.options ? entry.options.map((option) => html`<button type="submit" name="answer" value="${option}"${option === 'deny' && approval ? html` class="danger"` : ''}>${option}</button> `)
    : html`<label>Your answer <textarea name="answer" required maxlength="${MAX_FREE_TEXT_ANSWER}" rows="3">${typedAnswer}</textarea></label>
    <button type="submit">Send answer</button>`}
  </form>
</section>`;
}

function historyTable(history: DecisionEntry[]): Html {
  return html`<table>
  <thead><tr><th>Question</th><th>Asked by</th><th>State</th><th>Answer</th><th>Answered by</th><th>When</th></tr></thead>
  <tbody>${history.map((entry) => html`<tr data-decision-id="${entry.row.id}">
    <td>${entry.row.question}${entry.serviceName ? html`<div class="muted">About ${entry.serviceName}</div>` : ''}
      ${entry.approval ? html`<div class="muted">${entry.approval.title} on ${entry.approval.target}: operation <code>${entry.approval.operationId}</code>
        ${entry.approval.operationState ?? 'gone'}${entry.approval.operationReason ? ` (${entry.approval.operationReason})` : ''}</div>` : ''}</td>
    <td>${entry.askedBy.name}<div class="muted">${CHANNELS[entry.askedBy.channel] ?? entry.askedBy.channel}</div></td>
    <td class="state">${entry.shownState}</td>
    <td class="answer">${entry.row.answer ?? html`<span class="muted">—</span>`}</td>
    <td>${entry.shownState === 'cancelled' ? 'the token that asked' : entry.answeredBy ?? html`<span class="muted">—</span>`}${entry.row.answered_channel
      ? html`<div class="muted">${CHANNELS[entry.row.answered_channel] ?? entry.row.answered_channel}</div>` : ''}</td>
    <td>${entry.shownState === 'expired' ? `expired ${utc(entry.row.expires_at)}` : entry.row.answered_at ? utc(entry.row.answered_at) : ''}</td>
  </tr>`)}</tbody>
</table>`;
}

function utc(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}
