// A service's copies on its page: each with its state, its address (a link that opens it) and,
// for a role that reads caught mail, its Caught emails. Read through invoke() as the member
// (list_erp_service_copies), a page at a time.
import type { App } from '../app.js';
import { invoke } from '../core/invoke.js';
import listCopies from '../../tools/services/list-copies.js';
import { caughtEmailsPath } from './caught-emails-page.js';
import { html, type Html } from './html.js';
import { memberCredentials, roleHolds } from './member-principal.js';
import type { TeamSession } from './session-guard.js';

const COPIES_SHOWN = 20;

export async function copiesSection(app: App, session: TeamSession, serviceId: string, after: string | undefined): Promise<Html> {
  const cursor = typeof after === 'string' && after.length <= 200 ? after : undefined;
  const copies = await invoke(listCopies, { service_id: serviceId, limit: COPIES_SHOWN, ...(cursor ? { cursor } : {}) }, memberCredentials(session), app);
  const readsMail = roleHolds(session, 'mailcatcher:read');
  return html`<h2>Copies</h2>
${copies.data.length === 0 ? html`<p class="muted">${cursor ? 'No more copies.' : 'No copies yet. A copy runs on a copy of this service\'s data, and its mail is caught instead of sent.'}</p>` : html`<table>
  <thead><tr><th>Name</th><th>State</th><th>Address</th><th>Mail</th></tr></thead>
  <tbody>${copies.data.map((copy) => html`<tr data-copy-id="${copy.id}"><td><a href="/panel/services/${copy.id}">${copy.name}</a></td><td class="state">${copy.state}</td>
    <td>${copy.url ? html`<a href="${copy.url}" target="_blank" rel="noopener noreferrer">${copy.url}</a>` : html`<span class="muted">none while it is not running</span>`}</td>
    <td>${readsMail ? html`<a href="${caughtEmailsPath(copy.id)}">Caught emails</a>` : html`<span class="muted">Owners and admins read its caught emails.</span>`}</td></tr>`)}</tbody>
</table>`}
${copies.next_cursor ? html`<p><a href="/panel/services/${serviceId}?copies_after=${encodeURIComponent(copies.next_cursor)}">Next copies</a></p>` : ''}`;
}
