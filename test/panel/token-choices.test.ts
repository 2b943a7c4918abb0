// The token forms' choices of services and servers over plain HTTP, against the real server and
// a real SQLite file: the form offers what is chosen and the first matches of a search (never the
// whole team), the search endpoint answers the signed-in team's matches only, "Find" works with
// scripts off, submitted ids are checked against the team, and the API Tokens list names a
// restricted token's services.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { CHOICE_MATCHES } from '../../src/panel/token-choices.js';
import { hashPassword } from '../../src/auth/password.js';
import { WALK_LIMIT } from '../../src/db/repositories/service-name-search.js';
import { makeToken, seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';
import { insertManyServices } from '../support/many-services.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'choices-test-password';
const BASE = '/panel/developer/api-tokens';

let server: TestServer;
let teamId: string;
let serviceIds: string[];
let serverIds: string[];
let otherServiceId: string;
let owner: Visitor;

beforeAll(async () => {
  server = await startTestServer();
  const db = server.app.db.kysely;
  teamId = await insertTeam(db, { name: 'Hosting', plan: 'business', timezone: 'UTC' });
  serverIds = [await insertServer(db, { teamId, name: 'paris-1' }), await insertServer(db, { teamId, name: 'berlin-1' })];
  serviceIds = [];
  for (let i = 0; i < 60; i++) serviceIds.push(await insertService(db, { teamId, serverId: serverIds[i % 2]!, name: `Customer ${i + 1} ERP` }));
  await insertService(db, { teamId, serverId: serverIds[0]!, name: 'Customer 42 staging', parentId: serviceIds[41]! });
  const other = await insertTeam(db, { name: 'Other', plan: 'starter', timezone: 'UTC' });
  otherServiceId = await insertService(db, { teamId: other, serverId: await insertServer(db, { teamId: other, name: 'x' }), name: 'Customer 42 ERP of another team' });
  await seedMembers(server.app, teamId, PASSWORD, ['owner']);
  owner = new Visitor(server.baseUrl);
  expect((await owner.signIn('owner@example.com', PASSWORD)).status).toBe(303);
});
afterAll(async () => { await server.close(); });

const offeredServices = (text: string) => [...text.matchAll(/name="services" value="([^"]+)"/g)].map((match) => match[1]);

describe('the create-token form', () => {
  it('offers the first matches of an empty search, not every service of the team', async () => {
    const form = await owner.request('GET', `${BASE}/new`);
    expect(form.status).toBe(200);
    expect(offeredServices(form.text)).toEqual(serviceIds.slice(0, CHOICE_MATCHES));
    expect(form.text).toContain('data-choices-url="/panel/token-choices/services"');
    expect(form.text).toContain('Find ERP services by name');
  });

  it('shows the matches of a search when sent with "Find", keeping the services already chosen', async () => {
    const form = await owner.request('GET', `${BASE}/new`);
    const found = await owner.request('POST', BASE, [['_csrf', owner.csrfFrom(form.text)], ['name', 'kept'], ['find', 'services'],
      ['service_search', 'customer 42'], ['restrict_services', 'on'], ['services', serviceIds[3]!]]);
    expect(found.status).toBe(200);
    expect(offeredServices(found.text)).toEqual([serviceIds[3], serviceIds[41]]);
    expect(found.text).toMatch(new RegExp(`value="${serviceIds[3]}" checked`));
    expect(found.text).toContain('Customer 42 ERP <span class="muted">(and 1 copy)</span>');
    expect(found.text).toContain('value="kept"');
    expect(await server.app.db.kysely.selectFrom('api_tokens').select('id').where('name', '=', 'kept').execute()).toEqual([]);
  });

  it('creates a token limited to a service found by search, which the form never listed', async () => {
    const form = await owner.request('GET', `${BASE}/new`);
    expect(offeredServices(form.text)).not.toContain(serviceIds[55]);
    const created = await owner.request('POST', BASE, [['_csrf', owner.csrfFrom(form.text)], ['name', 'customer 56'], ['accepted_by', 'both'],
      ['access', 'full'], ['restrict_services', 'on'], ['services', serviceIds[55]!]]);
    expect(created.status).toBe(201);
    const token = await server.app.db.kysely.selectFrom('api_tokens').select('id').where('name', '=', 'customer 56').executeTakeFirstOrThrow();
    const listed = await server.app.db.kysely.selectFrom('api_token_services').select('service_id').where('token_id', '=', token.id).execute();
    expect(listed.map((row) => row.service_id)).toEqual([serviceIds[55]]);
  });

  it('refuses a service of another team, a copy and a server of another team, with the same sentences as before', async () => {
    const form = await owner.request('GET', `${BASE}/new`);
    const copyId = (await server.app.db.kysely.selectFrom('erp_services').select('id').where('name', '=', 'Customer 42 staging').executeTakeFirstOrThrow()).id;
    for (const id of [otherServiceId, copyId]) {
      const refused = await owner.request('POST', BASE, [['_csrf', owner.csrfFrom(form.text)], ['name', 'forged'], ['accepted_by', 'both'],
        ['access', 'full'], ['restrict_services', 'on'], ['services', serviceIds[0]!], ['services', id]]);
      expect(refused.status).toBe(422);
      expect(refused.text).toContain('Choose ERP services of this team only.');
    }
    const refused = await owner.request('POST', BASE, [['_csrf', owner.csrfFrom(form.text)], ['name', 'forged'], ['accepted_by', 'both'],
      ['access', 'full'], ['restrict_servers', 'on'], ['servers', 'srv_00000000000000000000']]);
    expect(refused.text).toContain('Choose servers of this team only.');
  });
});

describe('GET /panel/token-choices/{kind}', () => {
  it('answers the signed-in team\'s services whose name contains the search, with their copies counted', async () => {
    const answer = await owner.request('GET', `/panel/token-choices/services?q=${encodeURIComponent('CUSTOMER 42')}`);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ matches: [{ id: serviceIds[41], name: 'Customer 42 ERP', copies: 1 }], searched_all: true });
  });

  it('answers at most the first matches, and servers by name', async () => {
    const services = JSON.parse((await owner.request('GET', '/panel/token-choices/services?q=customer')).text) as { matches: unknown[] };
    expect(services.matches).toHaveLength(CHOICE_MATCHES);
    const servers = JSON.parse((await owner.request('GET', '/panel/token-choices/servers?q=berlin')).text);
    expect(servers).toEqual({ matches: [{ id: serverIds[1], name: 'berlin-1' }], searched_all: true });
  });

  it('sends a visitor who is not signed in to the sign-in page', async () => {
    const stranger = await new Visitor(server.baseUrl).request('GET', '/panel/token-choices/services?q=customer');
    expect(stranger.status).toBe(302);
    expect(stranger.location).toMatch(/^\/panel\/sign-in/);
  });
});

// Issue 37: a search that no piece serves reads at most WALK_LIMIT names (service-name-search.ts).
describe('a search of services in a team of more than WALK_LIMIT services', () => {
  let large: Visitor;
  let largeIds: string[];
  beforeAll(async () => {
    const db = server.app.db.kysely;
    const largeTeam = await insertTeam(db, { name: 'Large', plan: 'business', timezone: 'UTC' });
    const names = Array.from({ length: WALK_LIMIT + 50 }, (_, i) => `Shop ${i + 1}`);
    names[3] = 'Shop zq early';
    largeIds = await insertManyServices(db, largeTeam, await insertServer(db, { teamId: largeTeam, name: 'big host' }), names);
    await upsertMember(db, { teamId: largeTeam, email: 'large-owner@example.com', role: 'owner', passwordHash: await hashPassword(PASSWORD) });
    large = new Visitor(server.baseUrl);
    expect((await large.signIn('large-owner@example.com', PASSWORD)).status).toBe(303);
  }, 60_000);

  it('answers the matches of the first WALK_LIMIT names and searched_all false when the search stopped there', async () => {
    const answer = await large.request('GET', '/panel/token-choices/services?q=zq');
    expect(JSON.parse(answer.text)).toEqual({ matches: [{ id: largeIds[3], name: 'Shop zq early', copies: 0 }], searched_all: false });
  });

  it('says under the matches to type more of the name when "Find" stopped before the end, and not otherwise', async () => {
    const form = await large.request('GET', `${BASE}/new`);
    const stopped = '<p class="muted" data-choices-stopped="services">This search read only part of the team\'s ERP services: type more of the name.</p>';
    expect(form.text).toContain(stopped.replace('>This', ' hidden>This'));
    const found = await large.request('POST', BASE, [['_csrf', large.csrfFrom(form.text)], ['name', 'x'], ['find', 'services'],
      ['service_search', 'zq'], ['restrict_services', 'on']]);
    expect(found.status).toBe(200);
    expect(offeredServices(found.text)).toEqual([largeIds[3]]);
    expect(found.text).toContain(stopped);
  });
});

describe('GET /panel/developer/api-tokens', () => {
  it('names the services and servers a restricted token is limited to', async () => {
    await makeToken(server.app, teamId, { name: 'two customers', services: [serviceIds[9]!, serviceIds[58]!], servers: [serverIds[1]!] });
    const list = await owner.request('GET', BASE);
    expect(list.text).toContain('Only ERP services: Customer 10 ERP, Customer 59 ERP');
    expect(list.text).toContain('Only servers: berlin-1');
  });
});
