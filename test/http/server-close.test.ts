// Closing the server (as `serve` does on SIGTERM) while a client holds a request open: the
// requests in progress get the grace period to finish, then their connections are cut, so a
// stalled client can never keep the server from closing.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { makeToken, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';

/** A client that sends the head of a request with a body and only part of the body, then stalls. */
async function stalledUpload(baseUrl: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  socket.write(`POST /api/service-erp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":');
  return socket;
}

describe('closing the HTTP server', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.app.close();
    server = undefined;
  });

  it('cuts a connection whose request is still in progress once the grace period has passed', async () => {
    server = await startTestServer({}, { closeGraceMs: 300 });
    const team = await seedTeam(server.app);
    const socket = await stalledUpload(server.baseUrl, (await makeToken(server.app, team.teamId)).value);
    const cut = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Let the server start reading the request, so that the connection is busy, not idle.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await server.server.close();
    await cut;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('lets a request in progress finish within the grace period', async () => {
    server = await startTestServer({}, { closeGraceMs: 5_000 });
    const team = await seedTeam(server.app);
    const token = (await makeToken(server.app, team.teamId)).value;
    const socket = await stalledUpload(server.baseUrl, token);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => { text += chunk.toString(); });
      socket.once('close', () => resolve(text));
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closing = server.server.close();
    // The client sends the rest of its body after close() began: the request is still answered.
    socket.end(`${JSON.stringify('x'.repeat(1000 - 9 - 2))}}`);
    await closing;
    expect(await answer).toMatch(/^HTTP\/1\.1 4\d\d /);
  });
});
