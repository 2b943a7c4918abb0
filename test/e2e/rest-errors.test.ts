// How the REST API refuses: problem+json everywhere, the right status and headers, no internal
// text and no token value anywhere a client or a log reader could see it.
import { Writable } from 'node:stream';
import { sql } from '../../src/db/kysely-runtime.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

describe('REST errors', () => {
  let server: TestServer;
  let team: SeededTeam;
  let logLines: string[];
  beforeAll(async () => {
    logLines = [];
    const logStream = new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done(); } });
    server = await startTestServer({ rateLimit: { limit: 5, windowSeconds: 60 } }, { logger: { level: 'info', stream: logStream } });
    team = await seedTeam(server.app);
  });
  afterAll(async () => { await server.close(); });

  it('answers 401 without an error code in WWW-Authenticate when no token is sent', async () => {
    const { status, headers, body } = await getJson(server.baseUrl, '/api/service-erp');
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toBe('Bearer realm="teaminfra"');
    expect(body).toMatchObject({ status: 401, code: 'invalid_token', type: 'urn:teaminfra:problem:invalid_token' });
  });

  it('answers 401 with error="invalid_token" for an unknown token', async () => {
    const { status, headers } = await getJson(server.baseUrl, '/api/service-erp', 'tinf_unknown');
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toMatch(/^Bearer realm="teaminfra", error="invalid_token"/);
  });

  it('answers 415 when a POST body is text/plain, like any body that is not JSON', async () => {
    const token = await makeToken(server.app, team.teamId);
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
      const response = await fetch(`${server.baseUrl}/api/servers`, {
        method: 'POST', headers: { Authorization: `Bearer ${token.value}`, Accept: 'application/json', 'Content-Type': type }, body: '{"name":"eu-9"}',
      });
      expect(response.status, type).toBe(415);
      expect(await response.json(), type).toMatchObject({ code: 'unsupported_media_type' });
    }
  });

  it('answers 406 when the client will not accept JSON', async () => {
    const token = await makeToken(server.app, team.teamId);
    const { status, body } = await getJson(server.baseUrl, '/api/service-erp', token.value, { Accept: 'text/html' });
    expect(status).toBe(406);
    expect(body.detail).toBe('This API answers in JSON; send "Accept: application/json".');
  });

  it('answers 406 when Accept gives JSON a weight of zero', async () => {
    const token = await makeToken(server.app, team.teamId);
    for (const accept of ['application/json;q=0', '*/*;q=0']) {
      const { status, headers, body } = await getJson(server.baseUrl, '/api/service-erp', token.value, { Accept: accept });
      expect(status, accept).toBe(406);
      expect(headers.get('content-type'), accept).toMatch(/^application\/problem\+json/);
      expect(body.code, accept).toBe('not_acceptable');
    }
  });

  it('answers 400 naming every failing parameter', async () => {
    const token = await makeToken(server.app, team.teamId);
    const { status, body } = await getJson(server.baseUrl, '/api/service-erp?limit=0&color=red', token.value);
    expect(status).toBe(400);
    expect(body.code).toBe('validation_failed');
    expect(body.errors.map((error: { field: string }) => error.field).sort()).toEqual(['color', 'limit']);
  });

  it('answers 404 problem+json for a path that does not exist', async () => {
    const response = await fetch(`${server.baseUrl}/api/nothing-here`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { code: string }).code).toBe('not_found');
  });

  it('limits each token separately, with RateLimit headers and 429 with Retry-After', async () => {
    const first = await makeToken(server.app, team.teamId);
    const second = await makeToken(server.app, team.teamId);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof getJson>> | undefined;
    for (let index = 0; index < 6; index += 1) {
      last = await getJson(server.baseUrl, '/api/servers', first.value);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(last?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(last?.headers.get('ratelimit-policy')).toBe('"per-token";q=5;w=60');
    expect(last?.headers.get('ratelimit')).toMatch(/^"per-token";r=0;t=\d+$/);
    expect(last?.body.code).toBe('rate_limited');
    const other = await getJson(server.baseUrl, '/api/servers', second.value);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit')).toMatch(/^"per-token";r=4;t=\d+$/);
  });

  it('never writes a token value into the request log', async () => {
    const token = await makeToken(server.app, team.teamId);
    await getJson(server.baseUrl, '/api/token', token.value);
    await getJson(server.baseUrl, `/api/service-erp?cursor=${token.value}`, token.value);
    const log = logLines.join('');
    expect(log).toContain('"url":"/api/token"');
    expect(log).not.toContain(token.value);
    expect(log).not.toContain(token.value.slice(5, 30));
  });

  it('hides internal failures behind a generic sentence', async () => {
    const token = await makeToken(server.app, team.teamId);
    await sql`ALTER TABLE backups RENAME TO backups_moved`.execute(server.app.db.kysely);
    try {
      const { status, body } = await getJson(server.baseUrl, `/api/service-erp/${team.serviceIds[0]}/backups`, token.value);
      expect(status).toBe(500);
      expect(body.code).toBe('internal');
      expect(JSON.stringify(body)).not.toMatch(/backups|SQL|sqlite|at .*\.ts/i);
    } finally {
      await sql`ALTER TABLE backups_moved RENAME TO backups`.execute(server.app.db.kysely);
    }
  });
});
