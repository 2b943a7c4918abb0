// Panel requests are rate limited per session, as API requests are per token and with the same
// budget (TEAMINFRA_RATE_LIMIT, 600 a minute): one member's burst (a script, a stuck tab) must
// not slow every other team's pages (issue 37). Counted before any lookup, by the hash of the
// session cookie (the client address without one), so a flood costs no query; past the budget
// the answer is 429 with Retry-After and a page that says how long to wait.
// A refusal is held for REFUSAL_DELAY_MS before it is sent: a script that sends its next request
// as soon as the last is answered (the review's kept 40 in flight) otherwise gets thousands of
// cheap refusals a second, which still hold up every other team's pages on the one event loop;
// held, it sends 40 a second. A browser past the budget only waits a second longer for the page.
// A request of a session within the budget then waits its turn (session-turns.ts).
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { RateLimiter, type RateLimitConfig } from '../channel-neutral/rate-limit.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { SESSION_COOKIE } from './session-guard.js';
import { SessionTurns } from './session-turns.js';

const REFUSAL_DELAY_MS = 1_000;

/** Registers the limit on every request of the panel's scope (after the cookie plugin, which parses the cookie). */
export function limitEachSession(panel: FastifyInstance, config: RateLimitConfig): void {
  const limiter = new RateLimiter(config, 'per-session');
  const turns = new SessionTurns();
  panel.addHook('onRequest', async (request, reply) => {
    const session = request.cookies[SESSION_COOKIE];
    const key = session ? `session:${createHash('sha256').update(session).digest('hex')}` : `ip:${request.ip}`;
    const decision = limiter.take(key);
    void reply.header('RateLimit-Policy', decision.policyHeader).header('RateLimit', decision.limitHeader);
    if (decision.allowed) {
      // Without a session (sign-in, assets) there is nothing to search: the rate limit is enough.
      if (!session) return;
      const release = await turns.take(key);
      // The turn ends with the answer, or with the connection if the client left (even while it
      // waited); it is handed on in a later turn of the event loop (session-turns.ts says why).
      if (request.raw.socket?.destroyed) release();
      else reply.raw.once('close', () => setImmediate(release));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, REFUSAL_DELAY_MS));
    const waitSeconds = Math.max(1, decision.resetSeconds - REFUSAL_DELAY_MS / 1000);
    void reply.header('Retry-After', String(waitSeconds));
    return sendPage(reply, page('Too many requests', html`<p class="error">${session ? 'This session' : 'This address'} sent more than ${config.limit} requests in
${config.windowSeconds} seconds, the most the panel answers. Wait ${waitSeconds} ${waitSeconds === 1 ? 'second' : 'seconds'},
then reload the page.</p>`), 429);
  });
}
