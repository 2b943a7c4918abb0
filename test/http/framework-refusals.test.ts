// What is refused before any route runs (router, HTTP parser, Host) is problem+json with a
// code, like every other error, and repeats nothing of the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/fixtures.js';
import { sendRawHttp } from '../support/raw-http.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => { await server.close(); });

const rawRequest = (text: string) => sendRawHttp(server.baseUrl, text);

async function expectProblem(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = await response.json() as { code: string; status: number; detail: string };
  expect(problem).toMatchObject({ status, code });
  return problem;
}

describe('refusals before routing', () => {
  it('answers 400 problem+json when a path has a malformed percent-encoding', async () => {
    const problem = await expectProblem(await fetch(`${server.baseUrl}/api/service-erp/%E0%A4%A`), 400, 'validation_failed');
    expect(problem.detail).toBe('The request path is not valid.');
  });

  it('answers 414 problem+json without repeating the path when a path parameter is too long', async () => {
    const long = 'a'.repeat(600);
    const problem = await expectProblem(await fetch(`${server.baseUrl}/api/service-erp/${long}`), 414, 'uri_too_long');
    expect(JSON.stringify(problem)).not.toContain(long);
  });

  it('answers 400 problem+json when an HTTP/1.1 request has no Host header', async () => {
    const response = await rawRequest('GET /api/service-erp HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'Host' }] });
  });

  it('answers 400 problem+json when the request is not HTTP at all', async () => {
    const response = await rawRequest('HELLO THERE\r\n\r\n');
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(response.body)).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('answers 431 problem+json when the headers are too large', async () => {
    const response = await rawRequest(`GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(response.status).toBe(431);
    expect(JSON.parse(response.body)).toMatchObject({ status: 431, code: 'headers_too_large' });
  });
});
