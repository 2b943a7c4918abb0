// A created service's first login as its definition states it: the login and the fields filled in
// with what is known at create (the service's id, name and secrets), the password the
// ADMIN_PASSWORD secret; kept in the operation's result with the password and the fields sealed,
// opened for the service they were made for only.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApp } from '../../../src/engine/apps/app-registry.js';
import { bundledApp } from '../../../src/engine/apps/bundled-apps.js';
import { initialCredentialsOf, openInitialCredentials, sealInitialCredentials } from '../../../src/engine/apps/initial-credentials.js';
import { parseAppDefinition } from '../../../src/engine/apps/parse-app-definition.js';
import { SecretBox } from '../../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../../src/secrets/secrets-key.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../docker/support/docker-engine.js';
import { startDockerTeam, type DockerTeam } from '../docker/support/docker-team.js';
import { send, waitForOperation } from '../support/engine-http.js';

const box = new SecretBox(loadSecretsKeys('/nonexistent', { TEAMINFRA_SECRETS_KEY: randomBytes(32).toString('base64') }));

const LEDGER = `
name: ledger
services:
  web: { image: ledger:1, ports: ["5762"] }
x-teaminfra:
  web: web
  secrets: [ADMIN_PASSWORD, DB_PASSWORD]
  initial-credentials:
    login: owner
    fields: { company: "\${TEAMINFRA_SERVICE_NAME}", database: "books_\${TEAMINFRA_SERVICE_ID}" }
`;

const VALUES = { ADMIN_PASSWORD: 'generated pw', DB_PASSWORD: 'db pw', TEAMINFRA_SERVICE_ID: 'svc_a', TEAMINFRA_SERVICE_NAME: 'Books & Co' };

describe('initialCredentialsOf', () => {
  it('fills in the login and the fields the definition states, with the ADMIN_PASSWORD secret as the password', () => {
    expect(initialCredentialsOf(parseAppDefinition(LEDGER), VALUES)).toEqual({
      login: 'owner', password: 'generated pw', fields: { company: 'Books & Co', database: 'books_svc_a' },
    });
  });

  it('gives login admin and no fields when the definition only declares ADMIN_PASSWORD, and nothing without it', () => {
    expect(initialCredentialsOf(bundledApp('tryton')!, VALUES)).toEqual({ login: 'admin', password: 'generated pw' });
    expect(initialCredentialsOf(bundledApp('demo')!, VALUES)).toBeNull();
  });
});

describe('sealInitialCredentials', () => {
  it('keeps the password and the fields sealed, and opens them for their own service only', () => {
    const credentials = initialCredentialsOf(parseAppDefinition(LEDGER), VALUES)!;
    const sealed = sealInitialCredentials(box, 'svc_a', credentials);
    expect(sealed.login).toBe('owner');
    expect(JSON.stringify(sealed)).not.toContain('generated pw');
    expect(JSON.stringify(sealed)).not.toContain('Books');
    expect(openInitialCredentials({ initial_credentials: sealed }, 'svc_a', box)).toEqual(credentials);
    expect(openInitialCredentials({ initial_credentials: sealed }, 'svc_b', box)).toBeNull();
  });

  it('keeps no fields for credentials without any', () => {
    const sealed = sealInitialCredentials(box, 'svc_a', { login: 'admin', password: 'pw' });
    expect(Object.keys(sealed).sort()).toEqual(['login', 'password_sealed']);
    expect(openInitialCredentials({ initial_credentials: sealed }, 'svc_a', box)).toEqual({ login: 'admin', password: 'pw' });
  });
});

describe.runIf(dockerAvailable)('POST /api/service-erp of an app that states its first login', () => {
  const api = testDockerApi();
  let docker: DockerTeam;
  let serverId: string;

  beforeAll(async () => {
    docker = await startDockerTeam();
    serverId = await docker.addServer('first-login');
    await addApp(docker.server.app.db.kysely, LEDGER.replace('ledger:1', docker.image).replace('"5762"', '"8080"'), { replace: false });
  }, 300_000);

  afterAll(async () => {
    await docker?.server.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('gives the creating token the stated login, the generated password and the fields filled in for the service', async () => {
    const accepted = await send(docker.server.baseUrl, 'POST', '/api/service-erp', docker.token, { server_id: serverId, name: 'Books', app: 'ledger' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const created = await waitForOperation(docker.server.baseUrl, docker.token, accepted.body.id, 60_000);
    expect(created, JSON.stringify(created)).toMatchObject({ state: 'succeeded' });
    const serviceId = accepted.body.service_id as string;
    expect(created.result.initial_credentials).toEqual({
      login: 'owner', password: expect.stringMatching(/^\S{16,}$/), fields: { company: 'Books', database: `books_${serviceId}` },
    });
    const stored = await docker.server.app.db.kysely.selectFrom('operations').select('result').where('id', '=', accepted.body.id).executeTakeFirstOrThrow();
    expect(stored.result).not.toContain('Books');
    expect(stored.result).not.toContain(created.result.initial_credentials.password);
  }, 120_000);
});
