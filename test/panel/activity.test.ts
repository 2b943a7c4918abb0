// The panel's Activity page over plain HTTP, against the real server and database: a page holds
// 50 entries and links to the older ones with the same filters, a filter it does not understand
// is named in a sentence, another team's entries never show (another team's service is 404, as
// over the API), and the page stays small.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'activity-page-password';

let server: TestServer;
let team: SeededTeam;
let owner: Visitor;
let tokenId: string;

const entriesOf = (text: string) => [...text.matchAll(/data-entry-id="([^"]+)"/g)].map((match) => match[1]);

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app, { name: 'Acme' });
  const other = await seedTeam(server.app, { name: 'Other' });
  tokenId = (await makeToken(server.app, team.teamId, { name: 'robot' })).id;
  const otherToken = (await makeToken(server.app, other.teamId, { name: 'stranger' })).id;
  // 60 starts of the team's robot, and as many of another team's token, a millisecond apart.
  const start = Date.parse('2026-03-01T10:00:00Z');
  const rows = [];
  for (let i = 0; i < 120; i++) {
    const ms = start + i;
    const mine = i % 2 === 0;
    rows.push({
      id: `aud_${ms.toString(36).padStart(9, '0')}0${newId('aud').slice(-10)}`, team_id: mine ? team.teamId : other.teamId,
      at: new Date(ms).toISOString(), actor_type: 'token' as const, actor_id: mine ? tokenId : otherToken, channel: 'api',
      action: 'start_erp_service', target_type: 'service', target_id: mine ? team.serviceIds[0] : other.serviceIds[0],
      outcome: 'allowed' as const, code: null, detail: null,
    });
  }
  await server.app.db.kysely.insertInto('audit_log').values(rows).execute();
  await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
  owner = new Visitor(server.baseUrl);
  expect((await owner.signIn('owner@example.com', PASSWORD)).status).toBe(303);
});
afterAll(async () => { await server.close(); });

describe('GET /panel/activity', () => {
  it('shows 50 entries of the filtered token, newest first, and links to the 10 older ones with the same filter', async () => {
    const first = await owner.request('GET', `/panel/activity?token=${tokenId}&action=start_erp_service`);
    expect(first.status).toBe(200);
    const firstIds = entriesOf(first.text);
    expect(firstIds).toHaveLength(50);
    expect(firstIds).toEqual([...firstIds].sort().reverse());
    const older = /<a rel="next" href="([^"]+)">Older entries<\/a>/.exec(first.text)![1]!.replace(/&amp;/g, '&');
    expect(older).toContain(`token=${tokenId}`);
    const second = await owner.request('GET', older);
    const secondIds = entriesOf(second.text);
    expect(secondIds).toHaveLength(10);
    expect(secondIds[0]! < firstIds.at(-1)!).toBe(true);
    expect(second.text).not.toContain('Older entries');
    expect(Buffer.byteLength(first.text)).toBeLessThan(200 * 1024);
  });

  it('never shows another team\'s entries, and reads a day range with its last day included', async () => {
    const all = await owner.request('GET', '/panel/activity?from=2026-03-01&to=2026-03-01');
    expect(all.text).not.toContain('stranger');
    expect(entriesOf(all.text)).toHaveLength(50);
    const before = await owner.request('GET', '/panel/activity?to=2026-02-28');
    expect(entriesOf(before.text)).toEqual([]);
    expect(before.text).toContain('No activity matches these filters.');
  });

  it('names the filters it does not understand, and a cursor it never wrote', async () => {
    const refused = await owner.request('GET', '/panel/activity?token=robot&outcome=maybe&from=yesterday');
    expect(refused.status).toBe(200);
    expect(refused.text).toContain('These filters are not understood: token, outcome, from.');
    const notOnTheCalendar = await owner.request('GET', '/panel/activity?from=2026-02-30&to=2026-04-31');
    expect(notOnTheCalendar.text).toContain('These filters are not understood: from, to.');
    const forged = await owner.request('GET', '/panel/activity?cursor=not-ours');
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('This page link is out of date.');
  });

  it('answers 404, as the API does, when the service filter is another team\'s service', async () => {
    const otherService = await server.app.db.kysely.selectFrom('erp_services').select('id').where('team_id', '!=', team.teamId).executeTakeFirstOrThrow();
    const refused = await owner.request('GET', `/panel/activity?service=${otherService.id}`);
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('This ERP service does not exist in your team');
    expect(refused.text).not.toContain('data-entry-id');
    expect((await owner.request('GET', `/panel/activity?service=${team.serviceIds[0]}`)).status).toBe(200);
  });
});
