// A production service's outgoing mail relay, set, read back and removed through REST and MCP
// (set_outgoing_mail, get_outgoing_mail): the password is kept sealed and never comes back,
// a copy is refused one, a private or loopback host is refused, and the authorization core
// answers as for every service capability (404 out of reach, 403 without services:write).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSealed } from '../../src/secrets/secret-box.js';
import { relayLoginOf } from '../../src/mail/outgoing-relay.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { send } from '../engine/support/engine-http.js';
import { connectHttp, problemIn, textOf, type Connected } from '../mcp/clients.js';

const PASSWORD = 'relay-Pa55word:with@odd+chars';
/** A public address (no DNS is asked for an IP literal). */
const PUBLIC_HOST = '93.184.216.34';

describe('outgoing mail relay of a service', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let mcp: Connected<unknown>;
  const answers: string[] = [];

  const rest = async (method: string, path: string, as: string, body?: object) => {
    const answer = await send(server.baseUrl, method, path, as, body);
    answers.push(JSON.stringify(answer.body ?? null));
    return answer;
  };
  const path = (serviceId: string) => `/api/service-erp/${serviceId}/outgoing-mail`;

  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    mcp = await connectHttp(server.baseUrl, token) as Connected<unknown>;
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  it('has none until one is set', async () => {
    const read = await rest('GET', path(team.serviceIds[0]), token);
    expect(read).toMatchObject({ status: 200, body: { service_id: team.serviceIds[0], relay: null } });
  });

  it('REST: sets a relay with a login, reads it back without the password, and keeps the password sealed', async () => {
    const set = await rest('PUT', path(team.serviceIds[0]), token, { relay: { host: PUBLIC_HOST, port: 587, user: 'erp@example.com', password: PASSWORD } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({ service_id: team.serviceIds[0], relay: { host: PUBLIC_HOST, port: 587, user: 'erp@example.com', password_set: true } });
    expect((await rest('GET', path(team.serviceIds[0]), token)).body).toEqual(set.body);
    const row = await server.app.db.kysely.selectFrom('outgoing_mail_logins').selectAll().where('service_id', '=', team.serviceIds[0]).executeTakeFirstOrThrow();
    expect(isSealed(row.password as string)).toBe(true);
    expect(row.password).not.toContain(PASSWORD);
    expect(await relayLoginOf(server.app.db.kysely, server.app.secrets, team.serviceIds[0])).toEqual({ user: 'erp@example.com', password: PASSWORD });
    const service = await server.app.db.kysely.selectFrom('erp_services').select('outgoing_smtp').where('id', '=', team.serviceIds[0]).executeTakeFirstOrThrow();
    expect(service.outgoing_smtp).toBe(`${PUBLIC_HOST}:587`);
  });

  it('REST: "relay": null removes the relay and its login', async () => {
    const cleared = await rest('PUT', path(team.serviceIds[0]), token, { relay: null });
    expect(cleared).toMatchObject({ status: 200, body: { service_id: team.serviceIds[0], relay: null } });
    expect(await server.app.db.kysely.selectFrom('outgoing_mail_logins').selectAll().execute()).toEqual([]);
    expect((await rest('GET', path(team.serviceIds[0]), token)).body.relay).toBeNull();
  });

  it('MCP: set_outgoing_mail and get_outgoing_mail do the same, without the password', async () => {
    const set = await mcp.client.callTool({ name: 'set_outgoing_mail', arguments: {
      service_id: team.serviceIds[1], relay: { host: PUBLIC_HOST, port: 465, user: 'shop', password: PASSWORD },
    } });
    answers.push(JSON.stringify(set));
    expect(set.isError).toBeFalsy();
    expect(set.structuredContent).toEqual({ service_id: team.serviceIds[1], relay: { host: PUBLIC_HOST, port: 465, user: 'shop', password_set: true } });
    const read = await mcp.client.callTool({ name: 'get_outgoing_mail', arguments: { service_id: team.serviceIds[1] } });
    answers.push(JSON.stringify(read));
    expect(read.structuredContent).toEqual(set.structuredContent);
    const cleared = await mcp.client.callTool({ name: 'set_outgoing_mail', arguments: { service_id: team.serviceIds[1], relay: null } });
    expect(cleared.structuredContent).toEqual({ service_id: team.serviceIds[1], relay: null });
  });

  it('refuses a relay on a copy (409), whose mail always goes to its mail catcher', async () => {
    const refused = await rest('PUT', path(team.copyId), token, { relay: { host: PUBLIC_HOST, port: 587 } });
    expect([refused.status, refused.body.detail]).toEqual([409,
      `ERP service ${team.copyId} is a copy: its outgoing mail always goes to its mail catcher, never to a relay.`]);
    const overMcp = await mcp.client.callTool({ name: 'set_outgoing_mail', arguments: { service_id: team.copyId, relay: { host: PUBLIC_HOST, port: 587 } } });
    expect(overMcp.isError).toBe(true);
    expect(problemIn(overMcp)?.status).toBe(409);
    // Removing one from a copy asks for what already holds.
    expect(await rest('PUT', path(team.copyId), token, { relay: null })).toMatchObject({ status: 200, body: { service_id: team.copyId, relay: null } });
  });

  it('refuses a private, loopback or link-local host, a name that does not resolve, and a password without a user, each with a sentence', async () => {
    for (const host of ['127.0.0.1', '10.1.2.3', 'localhost', '169.254.169.254', '[::1]']) {
      const refused = await rest('PUT', path(team.serviceIds[0]), token, { relay: { host, port: 25 } });
      expect([refused.status, refused.body.detail], host).toEqual([400,
        'The relay host is a private, loopback or link-local address, which is not allowed; the operator can allow it.']);
    }
    const unresolvable = await rest('PUT', path(team.serviceIds[0]), token, { relay: { host: 'relay.invalid', port: 25 } });
    expect([unresolvable.status, unresolvable.body.detail]).toEqual([400, 'The relay host relay.invalid does not resolve to an address.']);
    const noUser = await rest('PUT', path(team.serviceIds[0]), token, { relay: { host: PUBLIC_HOST, port: 25, password: PASSWORD } });
    expect([noUser.status, noUser.body.detail]).toEqual([400, 'A relay password needs a relay user.']);
    const badPort = await rest('PUT', path(team.serviceIds[0]), token, { relay: { host: PUBLIC_HOST, port: 70_000 } });
    expect(badPort.status).toBe(400);
    expect((await rest('GET', path(team.serviceIds[0]), token)).body.relay).toBeNull();
  });

  it('refuses a relay user with a line break, an escape sequence or a direction control, naming the field, over REST and MCP', async () => {
    for (const user of ['erp@example.com\r\nMAIL FROM:<x@evil.example>', 'erp\u0000', 'erp\u001b[2J', 'erp\u202Emoc.elpmaxe']) {
      const refused = await rest('PUT', path(team.serviceIds[0]), token, { relay: { host: PUBLIC_HOST, port: 587, user, password: PASSWORD } });
      expect(refused.status, JSON.stringify(user)).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'relay.user', message: expect.stringContaining('control characters or characters that change the direction of text') }],
      });
    }
    const overMcp = await mcp.client.callTool({ name: 'set_outgoing_mail', arguments: {
      service_id: team.serviceIds[0], relay: { host: PUBLIC_HOST, port: 587, user: 'erp\nBCC', password: PASSWORD },
    } });
    expect(overMcp.isError).toBe(true);
    expect(problemIn(overMcp)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'relay.user', message: expect.stringContaining('U+000A') }] });
    expect((await rest('GET', path(team.serviceIds[0]), token)).body.relay).toBeNull();
    expect(await server.app.db.kysely.selectFrom('outgoing_mail_logins').selectAll().execute()).toEqual([]);
  });

  it('a token restricted to another service gets 404; one without services:write gets the 403 sentence and may still read', async () => {
    const restricted = (await makeToken(server.app, team.teamId, { name: 'restricted', services: [team.serviceIds[1]] })).value;
    for (const [method, body] of [['GET', undefined], ['PUT', { relay: null }]] as const) {
      const answer = await rest(method, path(team.serviceIds[0]), restricted, body);
      expect([answer.status, answer.body.detail]).toEqual([404, 'No such ERP service, or this API token cannot reach it.']);
    }
    const reader = (await makeToken(server.app, team.teamId, { name: 'reader', permissions: ['services:read'] })).value;
    const refused = await rest('PUT', path(team.serviceIds[0]), reader, { relay: { host: PUBLIC_HOST, port: 587 } });
    expect([refused.status, refused.body.detail]).toEqual([403, 'This API token does not have the services:write scope.']);
    expect((await rest('GET', path(team.serviceIds[0]), reader)).status).toBe(200);
  });

  it('the password is in no answer, REST or MCP, and no error text', async () => {
    const refusedWithPassword = await mcp.client.callTool({ name: 'set_outgoing_mail', arguments: {
      service_id: team.serviceIds[0], relay: { host: '127.0.0.1', port: 25, user: 'u', password: PASSWORD },
    } });
    answers.push(JSON.stringify(refusedWithPassword), textOf(refusedWithPassword));
    expect(answers.length).toBeGreaterThan(10);
    for (const answer of answers) expect(answer).not.toContain(PASSWORD);
    const audit = await server.app.db.kysely.selectFrom('audit_log').selectAll().execute();
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);
  });
});
