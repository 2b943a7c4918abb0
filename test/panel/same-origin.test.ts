// State-changing panel requests must come from the panel's own pages: a browser's Origin or
// Sec-Fetch-Site naming another site gets 403 and changes nothing, even with a valid CSRF token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedMembers, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  const team = await seedTeam(server.app);
  await seedMembers(server.app, team.teamId, 'right-password', ['admin']);
});
afterAll(async () => { await server.close(); });

async function signedIn(): Promise<{ visitor: Visitor; csrf: string }> {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn('admin@example.com', 'right-password')).status).toBe(303);
  return { visitor, csrf: visitor.csrfFrom((await visitor.request('GET', '/panel')).text) };
}

describe('panel requests from another site', () => {
  it('refuses a form with 403 when the Origin is another site, and the session stays', async () => {
    const { visitor, csrf } = await signedIn();
    for (const origin of ['https://evil.example', 'null', `http://evil.example:${new URL(server.baseUrl).port}`]) {
      const answer = await visitor.request('POST', '/panel/sign-out', { _csrf: csrf }, { origin });
      expect(answer.status, origin).toBe(403);
      expect(answer.text, origin).toContain('This form was sent from another site.');
    }
    expect((await visitor.request('GET', '/panel')).status).toBe(200);
  });

  it('refuses a form with 403 when Sec-Fetch-Site says cross-site or same-site', async () => {
    const { visitor, csrf } = await signedIn();
    for (const site of ['cross-site', 'same-site']) {
      expect((await visitor.request('POST', '/panel/sign-out', { _csrf: csrf }, { 'sec-fetch-site': site })).status, site).toBe(403);
    }
    expect((await visitor.request('GET', '/panel')).status).toBe(200);
  });

  it('refuses a sign-in posted from another site (login CSRF)', async () => {
    const visitor = new Visitor(server.baseUrl);
    const form = await visitor.request('GET', '/panel/sign-in');
    const secret = /name="_signin" value="([^"]+)"/.exec(form.text)?.[1] as string;
    const answer = await visitor.request('POST', '/panel/sign-in',
      { _signin: secret, email: 'admin@example.com', password: 'right-password', next: '/panel' }, { 'sec-fetch-site': 'cross-site' });
    expect(answer.status).toBe(403);
    expect(answer.headers.getSetCookie().some((cookie) => cookie.startsWith('teaminfra_session='))).toBe(false);
  });

  it('accepts a form from the panel itself, by Origin and Sec-Fetch-Site', async () => {
    const { visitor, csrf } = await signedIn();
    const answer = await visitor.request('POST', '/panel/sign-out', { _csrf: csrf }, { origin: server.baseUrl, 'sec-fetch-site': 'same-origin' });
    expect(answer.status).toBe(303);
  });

  it('leaves reading pages alone whatever their Origin', async () => {
    const { visitor } = await signedIn();
    expect((await visitor.request('GET', '/panel', undefined, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(200);
  });
});
