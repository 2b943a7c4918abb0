// The pages the OAuth server (oidc-provider) renders itself, in the panel's look and with the
// panel's escaping and headers: entering a device code, confirming it, the device success page,
// and the error page for requests it cannot redirect back (unknown client, bad redirect_uri).
// The `form` markup handed in is the library's own (its hidden CSRF field and the code it
// escaped); everything we add goes through html``.
import type { KoaContextWithOIDC } from 'oidc-provider';
import { html, trusted, type Html } from './html.js';
import { page, PANEL_CSP } from './layout.js';

function render(ctx: KoaContextWithOIDC, title: string, body: Html): void {
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', PANEL_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
  ctx.body = page(title, body).text;
}

export function userCodeInputPage(ctx: KoaContextWithOIDC, form: string, _out?: unknown, error?: Error): void {
  const problem = error === undefined ? undefined
    : error.name === 'AbortedError' ? 'The sign-in was cancelled. Run "teaminfra login" again for a new code.'
      : 'That code is not right, or it has expired or was already used. Check the code your command line shows.';
  render(ctx, 'Sign in the command line', html`
${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}
<p>Enter the code that <code>teaminfra login</code> shows. You will then approve the sign-in for your team.</p>
<label for="user-code">Code</label>
${trusted(form.replace('name="user_code"', 'id="user-code" name="user_code"'))}
<p><button type="submit" form="op.deviceInputForm">Continue</button></p>`);
}

export function userCodeConfirmPage(
  ctx: KoaContextWithOIDC, form: string, client: { clientName?: string; clientId: string }, deviceInfo: Record<string, unknown>, userCode: string,
): void {
  render(ctx, 'Confirm the code', html`
<p><strong>${client.clientName ?? client.clientId}</strong> asks to sign in.</p>
<p>Check that your command line shows this code: <code class="user-code">${userCode}</code></p>
<p class="muted">Requested from ${String(deviceInfo.ip ?? 'an unknown address')}${deviceInfo.ua ? html` with ${String(deviceInfo.ua)}` : ''}.
If you did not start this, or the code differs, cancel.</p>
${trusted(form)}
<p><button type="submit" form="op.deviceConfirmForm">Continue</button>
<button class="danger" type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button></p>`);
}

export function deviceSuccessPage(ctx: KoaContextWithOIDC): void {
  render(ctx, 'Command line signed in', html`
<p class="notice">The command line is signed in. You can close this page; it continues on its own.</p>
<p>The token it received is listed on the <a href="/panel/developer/api-tokens">API Tokens</a> page, where you can revoke it.</p>`);
}

export function oauthErrorPage(ctx: KoaContextWithOIDC, out: { error?: unknown; error_description?: unknown }): void {
  render(ctx, 'Sign-in could not continue', html`
<p class="error" role="alert">${String(out.error_description ?? out.error ?? 'The request could not be handled.')}</p>
<p class="muted">Error code: <code>${String(out.error ?? 'server_error')}</code>. Start the sign-in again from the assistant or the command line.</p>`);
}
