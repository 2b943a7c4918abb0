// Where an assistant may ask the browser to be sent back to, per RFC 8252 (OAuth for native apps)
// and the MCP authorization specification. A redirect URI is registered (RFC 7591) only when it is:
// - https, to any host;
// - http to a loopback host only: 127.0.0.1, [::1] or localhost (an app listening on this machine);
// - an app's private-use scheme: reverse-domain style as RFC 8252 §7.1 asks (`com.example.app:/cb`),
//   or a one-word app scheme as MCP clients use (`cursor://...`, `vscode://...`);
// and never a scheme that browsers or the system give a meaning of their own (`javascript:`,
// `data:`, `file:`, ...), never with a fragment or a user name and password in it.
// At the authorization endpoint the redirect_uri must equal a registered one, character for
// character, with one exception: for an http loopback URI the port may differ (RFC 8252 §7.3: a
// native app listens on a port the system gives it when it starts the sign-in).
// oidc-provider decides this by `application_type`: for "web" (the default, and what MCP clients
// register) it accepts http to any host and refuses every private-use scheme; for "native" it
// refuses https to a loopback host (9; 8 also refused one-word schemes). So this replaces the two methods that decide, on this provider's own
// Client classes only (each Provider builds its own).
import type { Provider } from 'oidc-provider';

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Schemes with a meaning of their own in browsers or operating systems: never an app's redirect. */
const RESERVED_SCHEMES: ReadonlySet<string> = new Set([
  'javascript', 'vbscript', 'data', 'file', 'blob', 'filesystem', 'about', 'view-source', 'ftp', 'ws', 'wss',
  'mailto', 'tel', 'sms', 'intent', 'content', 'chrome', 'chrome-extension', 'edge', 'moz-extension', 'resource', 'jar',
]);

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/** Why a redirect URI cannot be registered, as the end of a sentence; undefined when it can. */
export function redirectUriRefusal(uri: string): string | undefined {
  const url = URL.parse(uri);
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase();
  if (!url || !scheme) return `"${uri}" is not an absolute URI`;
  if (url.hash || uri.includes('#')) return `"${uri}" must not contain a fragment`;
  if (url.username || url.password) return `"${uri}" must not contain a user name or password`;
  if (scheme === 'https') return url.hostname ? undefined : `"${uri}" has no host`;
  if (scheme === 'http') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined
      : `"${uri}" uses http to a host other than this machine; use https, or http to 127.0.0.1, [::1] or localhost`;
  }
  if (RESERVED_SCHEMES.has(scheme)) return `"${uri}" uses the ${scheme}: scheme, which is not an app's own`;
  return undefined;
}

/** Whether the redirect_uri of an authorization request matches this registered one. */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  const [a, b] = [URL.parse(registered), URL.parse(requested)];
  if (!a || !b || !isLoopbackHttp(a) || !isLoopbackHttp(b)) return false;
  a.port = '';
  b.port = '';
  return a.href === b.href;
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

interface ClientSchema {
  redirect_uris: string[];
  invalidate(message: string): never;
}

/** Makes this provider register and match redirect URIs by the rules above. */
export function applyRedirectUriRules(provider: Provider): void {
  const Client = provider.Client as unknown as {
    Schema?: { prototype: { redirectUris: (this: ClientSchema, uris?: string[], label?: string) => void } };
    prototype: { redirectUriAllowed: (this: { redirectUris?: string[] }, value: string) => boolean };
  };
  if (typeof Client.Schema?.prototype.redirectUris !== 'function' || typeof Client.prototype.redirectUriAllowed !== 'function') {
    throw new Error('oidc-provider no longer checks redirect URIs where teaminfra replaces the check.');
  }
  Client.Schema.prototype.redirectUris = function checkRedirectUris(this: ClientSchema, uris = this.redirect_uris, label = 'redirect_uris') {
    for (const uri of uris) {
      const refusal = redirectUriRefusal(uri);
      // A description starting with the label makes the library answer invalid_redirect_uri (RFC 7591).
      if (refusal) this.invalidate(`${label}: ${refusal}`);
    }
  };
  Client.prototype.redirectUriAllowed = function redirectUriAllowed(this: { redirectUris?: string[] }, value: string) {
    return (this.redirectUris ?? []).some((registered) => redirectUriMatches(registered, value));
  };
}
