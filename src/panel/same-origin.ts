// The panel's second line against cross-site request forgery, beside the per-session CSRF
// token of every form: a state-changing request (anything but GET and HEAD) must come from the
// panel's own pages. Browsers say where a request comes from in Sec-Fetch-Site and Origin,
// which a page cannot forge; a request carrying neither (an old browser, a script) still needs
// the CSRF token.
import type { FastifyRequest } from 'fastify';
import { publicBaseOf } from '../oauth/public-base.js';
import { PanelRefusal } from './session-guard.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// "same-site" is refused too: a sibling subdomain is another origin, and may belong to someone else.
const OWN_FETCH_SITES = new Set(['same-origin', 'none']);

/** Throws a 403 PanelRefusal when a state-changing request comes from another site. */
export function refuseCrossSite(request: FastifyRequest, publicUrl: string | undefined): void {
  if (SAFE_METHODS.has(request.method)) return;
  const fetchSite = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  const fromElsewhere = (typeof fetchSite === 'string' && !OWN_FETCH_SITES.has(fetchSite.toLowerCase()))
    || (origin !== undefined && !ownAuthorities(request, publicUrl).has(authorityOf(origin) ?? ''));
  if (fromElsewhere) {
    throw new PanelRefusal(403, 'Request refused',
      'This form was sent from another site. The panel accepts changes only from its own pages: open the panel and try again there.');
  }
}

/**
 * host[:port] of this server as the browser sees it: the Host of the request, and the public
 * address when one is configured (behind a proxy). The scheme is not compared, since behind a
 * proxy that ends TLS the request arrives over http while the page was https.
 */
function ownAuthorities(request: FastifyRequest, publicUrl: string | undefined): Set<string> {
  const own = new Set<string>();
  if (request.headers.host) own.add(request.headers.host.toLowerCase());
  const configured = authorityOf(publicBaseOf(request, publicUrl));
  if (configured) own.add(configured);
  return own;
}

/** "https://infra.example.com:8443" → "infra.example.com:8443"; undefined for "null" or anything that is not an origin. */
function authorityOf(origin: string): string | undefined {
  const match = /^https?:\/\/([^/?#@\s]+)$/i.exec(origin.replace(/\/$/, ''));
  return match ? (match[1] as string).toLowerCase() : undefined;
}
