// Services whose app definition names an image only a registry has, end to end through the
// REST API on a real engine and a real registry (docker-registry with htpasswd on loopback),
// with the operator's own command for the login and a newcomer's settings: the create pulls it
// (a step of the operation) and records its digest, the service starts on it; a wrong password
// and an image the registry lacks fail the create with a sentence naming the registry; a copy
// runs the digest its source was made with even once the tag has moved on the engine, and a
// redeploy takes the newer image; a copy made on a second engine that never had the image
// pulls it by that digest.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertService } from '../../../src/db/repositories/services.js';
import { addApp } from '../../../src/engine/apps/app-registry.js';
import type { DockerApi } from '../../../src/engine/docker/docker-api.js';
import { readImageDigests } from '../../../src/engine/docker/docker-state.js';
import { LABEL, labelFilter } from '../../../src/engine/docker/labels.js';
import { loadServiceSpec } from '../../../src/engine/service-spec.js';
import { admin } from '../../support/cli.js';
import { act, send, waitForOperation } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam, type DockerTeam } from './support/docker-team.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from './support/second-engine.js';
import {
  publishImage, registryAuthHeader, registryInstalled, REGISTRY_PASSWORD, REGISTRY_USER, removeImage, startTestRegistry, type TestRegistry,
} from './support/test-registry.js';

const WRONG_PASSWORD = 'a-password-the-registry-refuses';

/** An app of one container, the bundled ERP's image as pushed to the registry under `image`. */
function definition(name: string, image: string): string {
  const variables = ['TEAMINFRA_SERVICE_ID', 'TEAMINFRA_SERVICE_NAME', 'TEAMINFRA_REVISION', 'TEAMINFRA_PUBLIC_URL'];
  return [
    `name: ${name}`, 'services:', '  erp:', `    image: ${JSON.stringify(image)}`, '    environment:',
    ...variables.map((variable) => `      ${variable}: \${${variable}}`),
    '    volumes:', '      - data:/data', '    ports:', '      - "8080"', 'volumes:', '  data: {}',
    'x-teaminfra:', '  web: erp', '  health-path: /health', '  start-deadline: 30s', '',
  ].join('\n');
}

/** The digests in the registry of the image the service's running web container was made from. */
async function digestsOfRunningImage(api: DockerApi, serviceId: string): Promise<string[]> {
  const [container] = await api.json<{ Id: string; ImageID: string }[]>('GET', '/containers/json', {
    query: { filters: labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.role]: 'service' }) },
  });
  if (!container) throw new Error(`no running container of ${serviceId}`);
  const image = await api.json<{ RepoDigests: string[] | null }>('GET', `/images/${container.ImageID}/json`);
  return (image.RepoDigests ?? []).map((each) => each.slice(each.indexOf('@') + 1));
}

describe.runIf(dockerAvailable && registryInstalled)('an app whose images come from a registry', () => {
  const api = testDockerApi();
  let registry: TestRegistry;
  let team: DockerTeam;
  let serverId: string;
  let erp: string;
  let firstDigest: string;
  let sourceId: string;
  const passwordFile = (password: string) => {
    const file = join(team.server.dataDir, `registry-password-${password.length}`);
    writeFileSync(file, `${password}\n`);
    return file;
  };
  const setPassword = (server: string, password: string) => admin(team.server.dataDir, [
    'set-registry-credentials', '--server', server, '--registry', registry.host, '--username', REGISTRY_USER, '--password-file', passwordFile(password),
  ]);
  const call = (method: string, path: string, body?: object) => send(team.server.baseUrl, method, path, team.token, body);
  const operation = (method: string, path: string, body?: object) => act(team.server.baseUrl, team.token, method, path, body);

  beforeAll(async () => {
    registry = await startTestRegistry();
    team = await startDockerTeam();
    serverId = await team.addServer('registry engine');
    erp = `${registry.host}/teaminfra-test/erp:1`;
    firstDigest = await publishImage(api, registry, team.image, 'teaminfra-test/erp:1', 1_500_000);
    await publishImage(api, registry, team.image, 'teaminfra-test/erp:2', 1_000);
    const db = team.server.app.db.kysely;
    await addApp(db, definition('registry-erp', erp), { replace: false });
    await addApp(db, definition('registry-erp-two', `${registry.host}/teaminfra-test/erp:2`), { replace: false });
    await addApp(db, definition('registry-absent', `${registry.host}/teaminfra-test/absent:1`), { replace: false });
    await setPassword(serverId, REGISTRY_PASSWORD);
  }, 300_000);

  afterAll(async () => {
    await team?.server.close();
    if (serverId) await removeEverythingOf(api, serverId);
    if (registry) {
      for (const name of [erp, `${registry.host}/teaminfra-test/erp:2`, `${registry.host}/teaminfra-test/erp@${firstDigest}`]) await removeImage(api, name);
      await registry.stop();
    }
    await api.close();
  }, 120_000);

  it('creates and starts a service after pulling its image, the pull a step of the create, its digest recorded', async () => {
    const created = await operation('POST', '/api/service-erp', { server_id: serverId, name: 'Pulled', app: 'registry-erp' });
    expect(created.state, created.reason).toBe('succeeded');
    sourceId = created.service_id;
    expect(created.steps).toEqual(expect.arrayContaining([
      expect.objectContaining({ step: `Pulled ${erp} from ${registry.host}`, outcome: 'done', detail: expect.stringMatching(/ MB of .* MB$/) }),
    ]));
    expect(await readImageDigests(team.server.app.db.kysely, sourceId)).toEqual({ [erp]: `${registry.host}/teaminfra-test/erp@${firstDigest}` });

    const started = await operation('POST', `/api/service-erp/${sourceId}/start`);
    expect(started.state, started.reason).toBe('succeeded');
    const service = (await call('GET', `/api/service-erp/${sourceId}`)).body;
    expect((await fetch(`${service.url}health`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    expect(await digestsOfRunningImage(api, sourceId)).toContain(firstDigest);
  }, 180_000);

  it('fails the create with a sentence naming the registry when it refuses the password set, and keeps the password out of every row', async () => {
    await setPassword(serverId, WRONG_PASSWORD);
    try {
      const accepted = await call('POST', '/api/service-erp', { server_id: serverId, name: 'Refused', app: 'registry-erp-two' });
      const failed = await waitForOperation(team.server.baseUrl, team.token, accepted.body.id, 60_000);
      expect(failed.state).toBe('failed');
      expect(failed.reason).toBe(`The image ${registry.host}/teaminfra-test/erp:2 of the app registry-erp-two could not be pulled onto the Docker engine at ` +
        `${api.address.text}: the registry ${registry.host} refused the credentials set for server ${serverId}; the operator sets them again with ` +
        `"teaminfra admin set-registry-credentials --server ${serverId} --registry ${registry.host} --username USER --password-file FILE", then tries again.`);
      const db = team.server.app.db.kysely;
      const rows = [
        await db.selectFrom('operations').select(['reason', 'result', 'steps']).execute(),
        await db.selectFrom('erp_services').select('state_reason').execute(),
        await db.selectFrom('events').selectAll().execute(),
        await db.selectFrom('registry_credentials').selectAll().execute(),
      ];
      expect(JSON.stringify(rows)).not.toContain(WRONG_PASSWORD);
      expect((await call('DELETE', `/api/service-erp/${accepted.body.service_id}`)).status).toBe(202);
    } finally {
      await setPassword(serverId, REGISTRY_PASSWORD);
    }
  }, 120_000);

  it('fails the create with a sentence when the registry has no such image', async () => {
    const accepted = await call('POST', '/api/service-erp', { server_id: serverId, name: 'Absent', app: 'registry-absent' });
    const failed = await waitForOperation(team.server.baseUrl, team.token, accepted.body.id, 60_000);
    expect(failed.state).toBe('failed');
    expect(failed.reason).toContain(`: the registry ${registry.host} has no image ${registry.host}/teaminfra-test/absent:1; the operator pushes it there, ` +
      "or names another image in the app's definition (teaminfra admin add-app --replace).");
    expect((await call('DELETE', `/api/service-erp/${accepted.body.service_id}`)).status).toBe(202);
  }, 120_000);

  it('runs a copy on the digest its source was made with once the tag has moved on, and a redeploy takes the newer image', async () => {
    // A newer image under the same tag, in the registry and on the engine (as another service's pull would leave it).
    const secondDigest = await publishImage(api, registry, team.image, 'teaminfra-test/erp:1', 1_000);
    const pull = await api.stream('POST', '/images/create', {
      query: { fromImage: `${registry.host}/teaminfra-test/erp`, tag: '1' }, headers: { 'X-Registry-Auth': registryAuthHeader(registry.host) },
    });
    for await (const chunk of pull) void chunk;

    const copied = await operation('POST', `/api/service-erp/${sourceId}/copies`, {});
    expect(copied.state, copied.reason).toBe('succeeded');
    const copyId = copied.service_id as string;
    expect(await readImageDigests(team.server.app.db.kysely, copyId)).toEqual({ [erp]: `${registry.host}/teaminfra-test/erp@${firstDigest}` });
    const copyStarted = await operation('POST', `/api/service-erp/${copyId}/start`);
    expect(copyStarted.state, copyStarted.reason).toBe('succeeded');
    expect(await digestsOfRunningImage(api, copyId)).toContain(firstDigest);
    expect(await digestsOfRunningImage(api, copyId)).not.toContain(secondDigest);

    const redeployed = await operation('POST', `/api/service-erp/${sourceId}/redeploy`);
    expect(redeployed.state, redeployed.reason).toBe('succeeded');
    expect(redeployed.steps).toEqual(expect.arrayContaining([expect.objectContaining({ step: `Pulled ${erp} from ${registry.host}` })]));
    expect(await digestsOfRunningImage(api, sourceId)).toContain(secondDigest);
    expect(await readImageDigests(team.server.app.db.kysely, sourceId)).toEqual({ [erp]: `${registry.host}/teaminfra-test/erp@${secondDigest}` });
    await removeImage(api, `${registry.host}/teaminfra-test/erp@${secondDigest}`);
  }, 240_000);

  it('admin set-server-image pulls a contract image only the registry has, with the server\'s login, and a service of the server runs it', async () => {
    const name = `${registry.host}/teaminfra-test/server-image:1`;
    const digest = await publishImage(api, registry, team.image, 'teaminfra-test/server-image:1', 1_000);
    const imageServer = await team.addServer('registry server image');
    // Without the login, the registry refuses, and the server keeps its image.
    await expect(admin(team.server.dataDir, ['set-server-image', '--server', imageServer, '--image', name]))
      .rejects.toThrow(new RegExp(`could not be pulled onto the Docker engine .*${escaped(registry.host)}`));
    await setPassword(imageServer, REGISTRY_PASSWORD);
    expect(await admin(team.server.dataDir, ['set-server-image', '--server', imageServer, '--image', name])).toMatchObject({ image: name });

    const created = await operation('POST', '/api/service-erp', { server_id: imageServer, name: 'Of the pulled image' });
    expect(created.state, created.reason).toBe('succeeded');
    const started = await operation('POST', `/api/service-erp/${created.service_id}/start`);
    expect(started.state, started.reason).toBe('succeeded');
    expect(await digestsOfRunningImage(api, created.service_id)).toContain(digest);
    expect(await readImageDigests(team.server.app.db.kysely, created.service_id)).toEqual({ [name]: `${registry.host}/teaminfra-test/server-image@${digest}` });
    expect((await call('DELETE', `/api/service-erp/${created.service_id}`)).status).toBe(202);
  }, 240_000);

  describe.runIf(secondEngineStartable)('on a second engine', () => {
    let second: SecondEngine;
    let secondServerId: string;
    let copyId: string | undefined;

    beforeAll(async () => {
      second = await startSecondEngine();
      const { image } = await admin(team.server.dataDir, ['build-erp-image', '--docker-host', second.host]);
      secondServerId = (await admin(team.server.dataDir, [
        'create-server', '--team', team.teamId, '--name', 'second engine', '--docker-host', second.host, '--image', image,
      ])).id as string;
      await setPassword(secondServerId, REGISTRY_PASSWORD);
    }, 300_000);

    afterAll(async () => {
      // Deleted while its engine runs, so that the test server's close does not look for it there.
      if (copyId) await operation('DELETE', `/api/service-erp/${copyId}`).catch(() => undefined);
      if (second && secondServerId) await removeEverythingOf(second.api, secondServerId);
      await second?.stop();
    }, 120_000);

    it('runs a copy made there, which never had the image, on the digest its source was made with, pulled by that digest', async () => {
      const db = team.server.app.db.kysely;
      const pinned = (await readImageDigests(db, sourceId))[erp]!;
      expect(await second.api.json('GET', `/images/${encodeURIComponent(pinned)}/json`, { accept: [404] })).toBeUndefined();

      // A copy whose server is another engine's: no capability asks for one yet (a copy stays on
      // its source's server), so the suite makes its row and asks the engine's driver directly.
      copyId = await insertService(db, {
        teamId: team.teamId, serverId: secondServerId, name: 'Elsewhere', parentId: sourceId, state: 'provisioning', app: 'registry-erp',
      });
      await team.server.app.engine.driver.copy((await loadServiceSpec(db, sourceId))!, (await loadServiceSpec(db, copyId))!);
      await db.updateTable('erp_services').set({ state: 'stopped' }).where('id', '=', copyId).execute();
      expect(await readImageDigests(db, copyId)).toEqual({ [erp]: pinned });

      const started = await operation('POST', `/api/service-erp/${copyId}/start`);
      expect(started.state, started.reason).toBe('succeeded');
      const copy = (await call('GET', `/api/service-erp/${copyId}`)).body;
      expect((await fetch(`${copy.url}health`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
      expect(await digestsOfRunningImage(second.api, copyId)).toContain(pinned.slice(pinned.indexOf('@') + 1));
    }, 600_000);

    it('never pulls an image build-app-images makes: an app of offline images fails its create there, saying how to build them', async () => {
      const accepted = await call('POST', '/api/service-erp', { server_id: secondServerId, name: 'Offline', app: 'tryton' });
      const failed = await waitForOperation(team.server.baseUrl, team.token, accepted.body.id, 60_000);
      expect(failed.state).toBe('failed');
      expect(failed.reason).toMatch(new RegExp(`^The image teaminfra-tryton-postgres:15 of the app tryton is not on the Docker engine ${escaped(second.host)}; ` +
        `the operator builds it with "teaminfra admin build-app-images --app tryton --docker-host ${escaped(second.host)}", then tries again\\.$`));
      expect(JSON.stringify(failed.steps)).not.toContain('Pulling');
      expect((await call('DELETE', `/api/service-erp/${accepted.body.service_id}`)).status).toBe(202);
    }, 120_000);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
