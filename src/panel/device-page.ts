// The approval page of a command-line sign-in (`teaminfra login`, device flow): no choices to
// make, since the command line always gets full access through the REST API only, so the page
// says exactly that and what asked for it.
import type { PanelSession } from '../db/repositories/panel-sessions.js';
import type { AccessSettings } from '../db/repositories/token-admin.js';
import type { PendingSignIn } from '../oauth/interaction.js';
import { html, type Html } from './html.js';
import { csrfField, page } from './layout.js';

export function cliAccessSettings(today: string): AccessSettings {
  return {
    name: `Command-line sign-in ${today}`, expiresOn: null, acceptedBy: 'api', fullAccess: true,
    permissions: [], serviceIds: null, serverIds: null, needsApproval: [],
  };
}

export function deviceApprovalPage(session: PanelSession & { team: { name: string } }, pending: PendingSignIn): Html {
  const device = pending.device;
  return page('Sign in the command line', html`
<p>The <strong>${pending.clientName}</strong> asks for a token of <strong>${session.team.name}</strong>.</p>
${device?.userCode ? html`<p>Its code: <code class="user-code">${device.userCode}</code>. It must match the code your command line shows.</p>` : ''}
<p class="muted">Requested from ${device?.ip ?? 'an unknown address'}${device?.userAgent ? html` with ${device.userAgent}` : ''}.</p>
<p>The token gets <strong>full access</strong> and is accepted by the <strong>REST API and command line</strong> only, not by the MCP server.
It never expires; it is listed on the API Tokens page, where you can revoke it, and <code>teaminfra logout</code> revokes it too.</p>
<form method="post" action="/panel/oauth/${pending.uid}">${csrfField(session)}
<button type="submit" name="decision" value="approve">Approve</button>
<button class="danger" type="submit" name="decision" value="decline">Decline</button>
</form>`, session);
}
