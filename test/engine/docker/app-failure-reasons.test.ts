// An app whose image is neither on the engine nor in a registry it reaches fails its create with what to do. An app whose web container prints the admin password it was given and exits: the start fails
// with a reason quoting that output, and the reason (in the API's answer and in every stored
// row) holds the generated password as [redacted], never in clear. The phrase it prints ("admin
// password X") is no `password=` setting, so only the driver naming the service's generated
// secrets to the router (secretValuesOf) can catch it. An app that prints one long line, with the
// generated password where a reason's quote is cut and terminal escapes, a text-direction
// override and tag characters before it: its reason and its failed step hold no part of the
// password and show every such character escaped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApp } from '../../../src/engine/apps/app-registry.js';
import { admin } from '../../support/cli.js';
import { makeToken, seedTeam, startTestServer, type TestServer } from '../../support/fixtures.js';
import { send, waitForOperation } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from './support/docker-engine.js';

describe.runIf(dockerAvailable)('the failure reason of an app that prints its generated secrets', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0, startTimeoutMs: 20_000 } }, {}, { engine: true });
    const team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    const image = (await admin(server.dataDir, ['build-erp-image', '--docker-host', TEST_DOCKER_HOST])).image as string;
    serverId = (await admin(server.dataDir, ['create-server', '--team', team.teamId, '--name', 'leaky-app', '--docker-host', TEST_DOCKER_HOST, '--image', image])).id;
    // The bundled image's node, made to print its configuration and exit, as a misconfigured ERP does.
    const program = "console.error('cannot log in: admin password ' + process.env.ADMIN + ' refused'); process.exit(3)";
    await addApp(server.app.db.kysely, [
      'name: leaky', 'services:', '  web:', `    image: ${JSON.stringify(image)}`,
      `    command: ["/usr/local/bin/node", "-e", ${JSON.stringify(program)}]`,
      '    environment:', '      ADMIN: ${ADMIN_PASSWORD}', '    ports:', '      - "8080"',
      'x-teaminfra:', '  web: web', '  start-deadline: 20s', '  secrets: [ADMIN_PASSWORD]', '',
    ].join('\n'), { replace: false });
    // 288 characters before the password: the first 12 of its 32 fell within the 300 a reason kept before it was redacted.
    const longLine = "'\\x1b[31mERROR\\x1b[0m \\u202eevil\\u202c \\u{E0001}\\u{E0068}\\u{E0069} ' + 'x'.repeat(243) + ' admin password ' + " +
      "process.env.ADMIN + ' refused ' + 'y'.repeat(600)";
    await addApp(server.app.db.kysely, [
      'name: shouty', 'services:', '  web:', `    image: ${JSON.stringify(image)}`,
      `    command: ["/usr/local/bin/node", "-e", ${JSON.stringify(`console.error(${longLine}); process.exit(3)`)}]`,
      '    environment:', '      ADMIN: ${ADMIN_PASSWORD}', '    ports:', '      - "8080"',
      'x-teaminfra:', '  web: web', '  start-deadline: 20s', '  secrets: [ADMIN_PASSWORD]', '',
    ].join('\n'), { replace: false });
    await addApp(server.app.db.kysely, [
      'name: unbuilt', 'services:', '  web:', '    image: 127.0.0.1:9/teaminfra-test-never-built:1', '    ports:', '      - "8080"',
      'x-teaminfra:', '  web: web', '',
    ].join('\n'), { replace: false });
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('fails the start with the output quoted and the generated password redacted, in the answer and in the database', async () => {
    const accepted = await send(server.baseUrl, 'POST', '/api/service-erp', token, { server_id: serverId, name: 'Leaky', app: 'leaky' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const created = await waitForOperation(server.baseUrl, token, accepted.body.id, 60_000);
    expect(created).toMatchObject({ state: 'succeeded', result: { initial_credentials: { login: 'admin' } } });
    const password = created.result.initial_credentials.password as string;
    const serviceId = accepted.body.service_id as string;

    const start = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token);
    const failed = await waitForOperation(server.baseUrl, token, start.body.id, 60_000);
    expect(failed.state).toBe('failed');
    expect(failed.reason).toContain('cannot log in: admin password [redacted] refused');
    expect(failed.reason).not.toContain(password);
    const service = (await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(service.state).toBe('failed');
    const db = server.app.db.kysely;
    const rows = [
      await db.selectFrom('operations').select(['reason', 'result']).execute(),
      await db.selectFrom('erp_services').select('state_reason').execute(),
      await db.selectFrom('events').selectAll().execute(),
    ];
    expect(JSON.stringify(rows)).not.toContain(password);
    expect((await send(server.baseUrl, 'DELETE', `/api/service-erp/${serviceId}`, token)).status).toBe(202);
  }, 180_000);

  it('quotes a long line with no part of the password at the cut and its escapes and hidden characters shown, in the reason and the step', async () => {
    const accepted = await send(server.baseUrl, 'POST', '/api/service-erp', token, { server_id: serverId, name: 'Shouty', app: 'shouty' });
    const created = await waitForOperation(server.baseUrl, token, accepted.body.id, 60_000);
    expect(created.state).toBe('succeeded');
    const password = created.result.initial_credentials.password as string;
    expect(password).toHaveLength(32);
    const serviceId = accepted.body.service_id as string;

    const start = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token);
    const failed = await waitForOperation(server.baseUrl, token, start.body.id, 60_000);
    expect(failed.state).toBe('failed');
    expect(failed.reason).toContain('its last output was "\\x1b[31mERROR\\x1b[0m \\u202eevil\\u202c \\u{e0001}\\u{e0068}\\u{e0069} xxx');
    expect(failed.reason.length).toBeLessThanOrEqual(480);
    const step = failed.steps.find((each: { outcome: string }) => each.outcome === 'failed');
    expect(step.detail).toBe(failed.reason);
    const db = server.app.db.kysely;
    const stored = JSON.stringify([
      failed, await db.selectFrom('operations').select(['reason', 'steps']).execute(),
      await db.selectFrom('erp_services').select('state_reason').execute(), await db.selectFrom('events').selectAll().execute(),
    ]);
    // Any 6 characters of the password in a row (the leak was its first 12); a random 6 is no chance match.
    for (let at = 0; at + 6 <= password.length; at++) expect(stored).not.toContain(password.slice(at, at + 6));
    // JSON writes a raw ESC as \u001b (at any depth), and the direction and tag characters as they are.
    expect(stored).not.toMatch(/u001b|[\u202e\u202c\u{E0000}-\u{E007F}]/u);
    expect((await send(server.baseUrl, 'DELETE', `/api/service-erp/${serviceId}`, token)).status).toBe(202);
  }, 180_000);

  it('fails the create of a service whose app image is not on the engine, naming the registry it could not be pulled from', async () => {
    const accepted = await send(server.baseUrl, 'POST', '/api/service-erp', token, { server_id: serverId, name: 'Unbuilt', app: 'unbuilt' });
    const failed = await waitForOperation(server.baseUrl, token, accepted.body.id, 60_000);
    expect(failed.state).toBe('failed');
    expect(failed.reason).toMatch(/^The image 127\.0\.0\.1:9\/teaminfra-test-never-built:1 of the app unbuilt could not be pulled onto the Docker engine at .+: the engine could not reach the registry 127\.0\.0\.1:9 \(.+\); check that the registry runs/);
    expect(failed.result).toBeNull();
  }, 120_000);
});
