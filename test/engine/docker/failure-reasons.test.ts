// A failure reason quotes an image's last output, and every token with services:read reads it:
// an image that prints a database URL with its password and the mail password it was given
// fails with a reason that holds neither, in the API's answer and in every stored row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDockerState } from '../../../src/engine/docker/docker-state.js';
import { admin } from '../../support/cli.js';
import { getJson, type TestServer } from '../../support/fixtures.js';
import { act } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { derivedImage, startDockerTeam } from './support/docker-team.js';

const DATABASE_PASSWORD = 'S3cret-Pg-Passw0rd';

describe.runIf(dockerAvailable)('the failure reason of an image that prints its secrets', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let leaky: string;

  beforeAll(async () => {
    const team = await startDockerTeam({ mail: { host: '0.0.0.0', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 } });
    ({ server, token } = team);
    await server.app.mailCatcher.start();
    serverId = await team.addServer('leaky');
    // The bundled image, whose program prints its configuration and exits, as a misconfigured ERP does.
    const program = `console.error('cannot connect to postgres://tryton:${DATABASE_PASSWORD}@db:5432/tryton, smtp ' + process.env.TEAMINFRA_SMTP_PASSWORD); process.exit(3)`;
    leaky = await derivedImage(api, team.image, `teaminfra-test-leaky:${serverId.toLowerCase()}`, [`CMD ["/usr/local/bin/node","-e",${JSON.stringify(program)}]`]);
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    if (leaky) await api.json('DELETE', `/images/${encodeURIComponent(leaky)}`, { query: { force: 1 }, accept: [404, 409] });
    await api.close();
  });

  it('holds neither the database password nor the copy\'s mail password, anywhere it is stored', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Leaky' });
    const copied = await act(server.baseUrl, token, 'POST', `/api/service-erp/${created.service_id}/copies`, { name: 'Leaky staging' });
    expect(copied.state).toBe('succeeded');
    const { mail } = await readDockerState(server.app.db.kysely, server.app.secrets, copied.service_id);
    expect(mail?.password.length).toBeGreaterThan(10);
    await admin(server.dataDir, ['set-server-image', '--server', serverId, '--image', leaky]);

    const failed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${copied.service_id}/start`);
    expect(failed.state).toBe('failed');
    expect(failed.reason).toContain('its last output was "cannot connect to postgres://tryton:[redacted]@db:5432/tryton, smtp [redacted]"');
    const service = await getJson(server.baseUrl, `/api/service-erp/${copied.service_id}`, token);
    expect(JSON.stringify(service.body)).not.toContain(DATABASE_PASSWORD);

    const stored = JSON.stringify([
      await server.app.db.kysely.selectFrom('operations').select('reason').execute(),
      await server.app.db.kysely.selectFrom('operation_transitions').select('reason').execute(),
      await server.app.db.kysely.selectFrom('erp_services').select('state_reason').execute(),
      await server.app.db.kysely.selectFrom('events').select('payload').execute(),
    ]);
    expect(stored).toContain('[redacted]');
    expect(stored).not.toContain(DATABASE_PASSWORD);
    expect(stored).not.toContain(mail?.password);
  });
});
