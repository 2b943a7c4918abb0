// The Overview over plain HTTP against the real server and a real SQLite file: a page of ERP
// services at a time with the counts per state above it, copies under their service (ten shown,
// the rest counted), a search by name, and pages of servers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { hashPassword } from '../../src/auth/password.js';
import { WALK_LIMIT } from '../../src/db/repositories/service-name-search.js';
import { OVERVIEW_PAGE_SIZE } from '../../src/panel/overview.js';
import { seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';
import { insertManyServices } from '../support/many-services.js';

const PASSWORD = 'overview-test-password';
const SERVICES = 120;

let server: TestServer;
let serviceIds: string[];
let visitor: Visitor;

beforeAll(async () => {
  server = await startTestServer();
  const db = server.app.db.kysely;
  const teamId = await insertTeam(db, { name: 'Hosting', plan: 'business', timezone: 'UTC' });
  const serverIds: string[] = [];
  for (let i = 0; i < 55; i++) serverIds.push(await insertServer(db, { teamId, name: `host ${String(i + 1).padStart(2, '0')}` }));
  serviceIds = [];
  for (let i = 0; i < SERVICES; i++) {
    serviceIds.push(await insertService(db, { teamId, serverId: serverIds[i % 55]!, name: `Customer ${i + 1} ERP`, state: i % 3 === 0 ? 'running' : 'stopped' }));
  }
  // The first service has 12 copies; the second one.
  for (let i = 0; i < 12; i++) await insertService(db, { teamId, serverId: serverIds[0]!, name: `staging ${i + 1}`, parentId: serviceIds[0]! });
  await insertService(db, { teamId, serverId: serverIds[1]!, name: 'Customer 2 test copy', parentId: serviceIds[1]! });
  await insertService(db, { teamId, serverId: serverIds[1]!, name: 'Odd <b>50%_off</b> ERP' });
  // Another team's service, never shown.
  const other = await insertTeam(db, { name: 'Other', plan: 'starter', timezone: 'UTC' });
  await insertService(db, { teamId: other, serverId: await insertServer(db, { teamId: other, name: 'theirs' }), name: 'Customer 7 ERP elsewhere' });
  await seedMembers(server.app, teamId, PASSWORD, ['member']);
  visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn('member@example.com', PASSWORD)).status).toBe(303);
});
afterAll(async () => { await server.close(); });

// Each service's name links to its page.
const topLevelRows = (text: string) => [...text.matchAll(/<tr><td><a href="\/panel\/services\/svc_[0-9a-z]{20}">(Customer \d+ ERP|Odd[^<]*)<\/a><\/td>/g)]
  .map((match) => match[1]);
const nextLink = (text: string, rel: string) => [...text.matchAll(/<a (?:rel="next" )?href="([^"]+)">([^<]+)<\/a>/g)]
  .find((match) => match[2] === rel)?.[1]?.replaceAll('&amp;', '&');

describe('GET /panel (Overview)', () => {
  it('shows the counts per state of every service, copies included, above the first page of services', async () => {
    const page = await visitor.request('GET', '/panel');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`${SERVICES + 14} ERP services (copies included)`);
    expect(page.text).toContain(`<span data-state-count="running">${SERVICES / 3}</span>`);
    expect(page.text).toContain(`<span data-state-count="stopped">${SERVICES - SERVICES / 3 + 14}</span>`);
    expect(topLevelRows(page.text)).toEqual(Array.from({ length: OVERVIEW_PAGE_SIZE }, (_, i) => `Customer ${i + 1} ERP`));
  });

  it('shows ten copies under their service and counts the others', async () => {
    const page = await visitor.request('GET', '/panel');
    expect(page.text.match(/staging \d+<\/a> <span class="muted">\(copy\)/g)).toHaveLength(10);
    expect(page.text).toContain('↳ and 2 more copies');
    expect(page.text).toContain('Customer 2 test copy</a> <span class="muted">(copy)</span>');
    expect(page.text.indexOf('Customer 2 test copy')).toBeGreaterThan(page.text.indexOf('Customer 2 ERP'));
    expect(page.text.indexOf('Customer 2 test copy')).toBeLessThan(page.text.indexOf('Customer 3 ERP'));
  });

  it('continues on the next page where the first stopped, until no service is left', async () => {
    const seen: string[] = [];
    let path: string | undefined = '/panel';
    while (path) {
      const page = await visitor.request('GET', path);
      expect(page.status).toBe(200);
      seen.push(...topLevelRows(page.text) as string[]);
      path = nextLink(page.text, 'Next ERP services');
    }
    expect(seen).toEqual([...Array.from({ length: SERVICES }, (_, i) => `Customer ${i + 1} ERP`), 'Odd &lt;b&gt;50%_off&lt;/b&gt; ERP']);
  });

  it('finds services by part of their name, whatever the case, and only the team\'s own', async () => {
    const page = await visitor.request('GET', `/panel?q=${encodeURIComponent('customer 7')}`);
    expect(topLevelRows(page.text)).toEqual(['Customer 7 ERP', 'Customer 70 ERP', 'Customer 71 ERP', 'Customer 72 ERP', 'Customer 73 ERP',
      'Customer 74 ERP', 'Customer 75 ERP', 'Customer 76 ERP', 'Customer 77 ERP', 'Customer 78 ERP', 'Customer 79 ERP']);
    expect(page.text).not.toContain('elsewhere');
    expect(page.text).toContain('value="customer 7"');
  });

  it('takes % and _ in a search as characters, and shows the name escaped', async () => {
    const page = await visitor.request('GET', `/panel?q=${encodeURIComponent('50%_')}`);
    expect(topLevelRows(page.text)).toEqual(['Odd &lt;b&gt;50%_off&lt;/b&gt; ERP']);
    expect((await visitor.request('GET', `/panel?q=${encodeURIComponent('%')}`)).text).toContain('Odd &lt;b&gt;50%_off');
    expect(topLevelRows((await visitor.request('GET', `/panel?q=${encodeURIComponent('o_d')}`)).text)).toEqual([]);
    expect((await visitor.request('GET', '/panel?q=nothing-has-this')).text).toContain('No ERP service has a name containing that.');
  });

  it('pages through the servers fifty at a time', async () => {
    const first = await visitor.request('GET', '/panel');
    expect(first.text.match(/<tr><td>host \d+<\/td>/g)).toHaveLength(50);
    const next = nextLink(first.text, 'Next servers');
    expect(next).toBeDefined();
    const second = await visitor.request('GET', next!);
    expect(second.text.match(/<tr><td>host \d+<\/td>/g)).toEqual(['<tr><td>host 51</td>', '<tr><td>host 52</td>', '<tr><td>host 53</td>', '<tr><td>host 54</td>', '<tr><td>host 55</td>']);
  });

  it('starts again from the first page when the cursor in the address was edited', async () => {
    const page = await visitor.request('GET', '/panel?after=not-an-id');
    expect(page.status).toBe(200);
    expect(topLevelRows(page.text)[0]).toBe('Customer 1 ERP');
  });
});

// Issue 37: a search that no piece serves reads at most WALK_LIMIT names (service-name-search.ts),
// says so, and links to the same search over the next ones.
describe('GET /panel?q= (Overview search) in a team of more than WALK_LIMIT services', () => {
  let large: Visitor;
  let largeIds: string[];
  const LATE = WALK_LIMIT + 30;
  const shopRows = (text: string) => [...text.matchAll(/<tr><td><a href="\/panel\/services\/(svc_[0-9a-z]{20})">Shop [^<]*<\/a><\/td>/g)].map((match) => match[1]);
  beforeAll(async () => {
    const db = server.app.db.kysely;
    const teamId = await insertTeam(db, { name: 'Large', plan: 'business', timezone: 'UTC' });
    const names = Array.from({ length: WALK_LIMIT + 60 }, (_, i) => `Shop ${i + 1}`);
    names[LATE] = 'Shop zq late';
    largeIds = await insertManyServices(db, teamId, await insertServer(db, { teamId, name: 'big host' }), names);
    await upsertMember(db, { teamId, email: 'large@example.com', role: 'member', passwordHash: await hashPassword(PASSWORD) });
    large = new Visitor(server.baseUrl);
    expect((await large.signIn('large@example.com', PASSWORD)).status).toBe(303);
  }, 60_000);

  it('reads the first WALK_LIMIT names for a search of escaped wildcards that no name holds, says so, and links to the next ones', async () => {
    const page = await large.request('GET', `/panel?q=${encodeURIComponent('%_')}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('None of the first 1,000 ERP services has a name containing that.');
    const next = nextLink(page.text, 'search the next 1,000');
    expect(next).toBe(`/panel?q=%25_&after=${largeIds[WALK_LIMIT - 1]}`);
    const rest = await large.request('GET', next!);
    expect(rest.text).toContain('No ERP service has a name containing that.');
    expect(nextLink(rest.text, 'search the next 1,000')).toBeUndefined();
  });

  it('finds a match beyond the first WALK_LIMIT names on the page the search goes on to', async () => {
    const page = await large.request('GET', '/panel?q=ZQ');
    expect(shopRows(page.text)).toEqual([]);
    const next = await large.request('GET', nextLink(page.text, 'search the next 1,000')!);
    expect(shopRows(next.text)).toEqual([largeIds[LATE]]);
    expect(next.text).not.toContain('search the next');
  });
});
