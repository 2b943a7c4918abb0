// The panel's rate limit per session, from outside: a real server with the default budget (the
// API's per token, TEAMINFRA_RATE_LIMIT unset), two teams' members signed in through the form.
// One member's burst is answered 429 with Retry-After and a page that says how long to wait,
// while the other team's member is still answered (issue 37). The burst's 600 answered requests
// also pass through the session's turns (session-turns.ts): a turn never handed on would hang it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/password.js';
import { rateLimitFromEnv } from '../../src/channel-neutral/rate-limit.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { startTestServer, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'rate-limit-test-password';
// The default, as a newcomer's `serve` has it (the test server otherwise lifts it).
const DEFAULT_LIMIT = rateLimitFromEnv('');
const IN_FLIGHT = 40;

let server: TestServer;
let flooder: Visitor;
let neighbour: Visitor;

beforeAll(async () => {
  server = await startTestServer({ rateLimit: DEFAULT_LIMIT });
  const db = server.app.db.kysely;
  const passwordHash = await hashPassword(PASSWORD);
  for (const [team, email] of [['Busy', 'busy@example.com'], ['Neighbour', 'neighbour@example.com']] as const) {
    const teamId = await insertTeam(db, { name: team, plan: 'business', timezone: 'UTC' });
    await upsertMember(db, { teamId, email, role: 'member', passwordHash });
  }
  flooder = new Visitor(server.baseUrl);
  neighbour = new Visitor(server.baseUrl);
  expect((await flooder.signIn('busy@example.com', PASSWORD)).status).toBe(303);
  expect((await neighbour.signIn('neighbour@example.com', PASSWORD)).status).toBe(303);
});
afterAll(async () => { await server.close(); });

/** Waits (at most one window) until the window has at least 20 s left, so that a burst ends inside one. */
async function startOfAWindow(): Promise<void> {
  const windowMs = DEFAULT_LIMIT.windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe('the panel rate limit per session', () => {
  it('answers a burst from one session 429 with Retry-After past the default budget while another team\'s session is answered', async () => {
    await startOfAWindow();
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<Visitor['request']>> | undefined;
    // Bursts of IN_FLIGHT requests at once, as the review's script sent, until one is refused.
    while (!refused && statuses.length < DEFAULT_LIMIT.limit + IN_FLIGHT) {
      const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, () => flooder.request('GET', '/panel/token-choices/services?q=zz')));
      statuses.push(...answers.map((answer) => answer.status));
      refused = answers.find((answer) => answer.status === 429);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(DEFAULT_LIMIT.limit);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(refused?.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(refused?.headers.get('ratelimit-policy')).toBe(`"per-session";q=${DEFAULT_LIMIT.limit};w=${DEFAULT_LIMIT.windowSeconds}`);
    expect(refused?.headers.get('ratelimit')).toMatch(/^"per-session";r=0;t=\d+$/);
    expect(refused?.headers.get('content-type')).toMatch(/^text\/html/);
    expect(refused?.text).toContain('<title>Too many requests · teaminfra</title>');
    expect(refused?.text).toMatch(/This session sent more than 600 requests in\s+60 seconds, the most the panel answers\. Wait \d+ seconds?,\s+then reload the page\./);
    expect(refused?.text).toContain(`Wait ${refused?.headers.get('retry-after')} second`);

    // The busy session stays refused for the rest of the window, whatever page it asks, each
    // refusal held a second (a script in a loop then sends one request a second per connection)...
    const started = Date.now();
    expect((await flooder.request('GET', '/panel')).status).toBe(429);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    // ...and the other team's member is answered as before, with a budget of its own.
    const overview = await neighbour.request('GET', '/panel');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Neighbour');
    expect(overview.headers.get('ratelimit')).toMatch(new RegExp(`^"per-session";r=${DEFAULT_LIMIT.limit - 1};t=\\d+$`));
  }, 120_000);
});
