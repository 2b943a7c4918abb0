// The REST routes as a client library calls them, in raw HTTP: a POST that says its body is JSON
// but sends none (what many libraries send for `start`) is an action without fields, not bad JSON;
// a body that is there and is not JSON is still refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { sendRawHttp } from '../support/raw-http.js';

let server: TestServer;
let team: SeededTeam;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  token = (await makeToken(server.app, team.teamId)).value;
});
afterAll(async () => { await server.close(); });

function postStart(serviceId: string, headers: string, body = '') {
  const { host } = new URL(server.baseUrl);
  return sendRawHttp(server.baseUrl, `POST /api/service-erp/${serviceId}/start HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n` +
    `Accept: application/json\r\n${headers}Connection: close\r\n\r\n${body}`);
}

describe('POST /api/service-erp/{service_id}/start', () => {
  it('answers 202 with the operation when the body is empty with Content-Type: application/json and Content-Length: 0', async () => {
    const answer = await postStart(team.serviceIds[0], 'Content-Type: application/json\r\nContent-Length: 0\r\n');
    expect(answer.status, answer.body).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'start', state: 'queued', service_id: team.serviceIds[0] });
  });

  it('answers 202 when the body is empty with Content-Type: application/json; charset=utf-8 and no Content-Length', async () => {
    const answer = await postStart(team.serviceIds[1], 'Content-Type: application/json; charset=utf-8\r\n');
    expect(answer.status, answer.body).toBe(202);
  });

  it('answers 400 problem+json when the body is there and is not JSON', async () => {
    for (const body of ['{', ' ']) {
      const answer = await postStart(team.serviceIds[0], `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`, body);
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'validation_failed', detail: 'The request body is not valid JSON.' });
    }
  });
});
