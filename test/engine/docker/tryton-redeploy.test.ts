// Redeploys of a Tryton service (PostgreSQL beside it) on a real Docker engine: the operator
// gives the app a new image (`admin add-app --replace` with a new tag) and the team redeploys.
// The new image's migrate command runs within the definition's migrate deadline, not its start
// deadline, while the revision before keeps answering at the service's url; the url stays the
// same, and the data made before is read back after. A migration that fails leaves the revision
// before serving, with a sentence. The images' migrate commands are made slow, or failing, by
// derived images whose /usr/local/sbin/teaminfra-tryton-migrate (first on PATH) wraps the real one.
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledApp } from '../../../src/engine/apps/bundled-apps.js';
import { buildAppImages } from '../../../src/engine/apps/images/build-app-images.js';
import { packageRoot } from '../../../src/package-root.js';
import { LABEL } from '../../../src/engine/docker/labels.js';
import { admin } from '../../support/cli.js';
import { send, waitForOperation } from '../support/engine-http.js';
import { derivedImage, startDockerTeam, type DockerTeam } from './support/docker-team.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';

const tryton = bundledApp('tryton')!;
/** A relay at a public address (set through the API, whose rules refuse private ones); nothing is sent to it. */
const RELAY = { host: '93.184.216.34', port: 587, user: 'erp@example.com', password: 'relay pass+word:@/' };
const BASE_IMAGE = tryton.containers.find((container) => container.name === 'tryton')!.image;
/** The start deadline of the test's definition; the slow migration takes longer than it. */
const START_DEADLINE_S = 90;
const SLOW_MIGRATION_S = START_DEADLINE_S + 10;
/**
 * A first start makes the database, and a migration upgrades it (trytond-admin with four
 * modules): minutes each, and over ten on a loaded shared machine.
 */
const FIRST_START_MS = 25 * 60_000;
const MIGRATION_MS = 25 * 60_000;

/** The bundled Tryton definition with a short start deadline and the tryton container's image given. */
function definition(image: string): string {
  const source = readFileSync(join(packageRoot, 'src', 'engine', 'apps', 'bundled', 'tryton.yml'), 'utf8');
  const changed = source.replace(`image: ${BASE_IMAGE}`, `image: ${image}`).replace(/start-deadline: \S+/, `start-deadline: ${START_DEADLINE_S}s`);
  expect(changed).toContain(`image: ${image}`);
  expect(changed).toContain(`start-deadline: ${START_DEADLINE_S}s`);
  return changed;
}

/** A tar with one executable shell script at usr/local/sbin/teaminfra-tryton-migrate. */
function migrateWrapper(script: string): Readable {
  const tar = pack();
  tar.entry({ name: 'usr/local/sbin/teaminfra-tryton-migrate', mode: 0o755 }, `#!/bin/sh\n${script}\n`);
  tar.finalize();
  return tar as unknown as Readable;
}

async function rpc(base: string, method: string, params: unknown[], session?: string) {
  const response = await fetch(`${base}/tryton/`, {
    method: 'POST', signal: AbortSignal.timeout(30_000),
    headers: { 'content-type': 'application/json', ...(session ? { authorization: `Session ${session}` } : {}) },
    body: JSON.stringify({ id: 1, method, params }),
  });
  return { status: response.status, body: await response.json().catch(() => null) as { result?: any } | null };
}

/** The status of Tryton's `common.server.version` at the service url (it needs no database nor login). */
async function serverVersion(url: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 1, method: 'common.server.version', params: [] }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.text();
  return response.status;
}

describe.runIf(dockerAvailable)('redeploying a Tryton service to a new image', () => {
  const api = testDockerApi();
  const suffix = Math.random().toString(36).slice(2, 10);
  const slowImage = `teaminfra-tryton:test-slow-migrate-${suffix}`;
  const failingImage = `teaminfra-tryton:test-failing-migrate-${suffix}`;
  const appName = `tryton-redeploy-${suffix}`;
  const definitionFile = join(mkdtempSync(join(tmpdir(), 'teaminfra-redeploy-')), 'tryton.yml');
  let team: DockerTeam;
  let serverId: string;
  let serviceId: string;
  let password: string;
  let url: string;
  let partyId: number;

  const replaceDefinition = async (image: string) => {
    writeFileSync(definitionFile, definition(image));
    await admin(team.server.dataDir, ['add-app', '--file', definitionFile, '--name', appName, '--replace']);
  };
  const service = async () => (await send(team.server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, team.token)).body;
  const login = async (base: string) => {
    const answer = await rpc(base, 'common.db.login', ['admin', { password }, 'en']);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [userId, key] = answer.body!.result as [number, string];
    return Buffer.from(`admin:${userId}:${key}`).toString('base64');
  };
  const partyName = async (base: string) => {
    const read = await rpc(base, 'model.party.party.read', [[partyId], ['name'], {}], await login(base));
    return (read.body!.result as { name: string }[])[0]?.name;
  };
  const trytonContainers = async () => (await containersOfServer(api, serverId, 'service'))
    .filter((each) => each.Labels[LABEL.serviceId] === serviceId && each.Labels[LABEL.appService] === 'tryton');
  const emailUriOf = async (containerId: string) => {
    const inspected = await api.json<{ Config: { Env: string[] } }>('GET', `/containers/${containerId}/json`);
    return inspected.Config.Env.find((entry) => entry.startsWith('TRYTOND_EMAIL__URI='))?.slice('TRYTOND_EMAIL__URI='.length);
  };
  // The migrate command's container, kept after it ends for its output (service-start.ts), runs only while it migrates.
  const migrating = async () => (await containersOfServer(api, serverId, 'service'))
    .some((each) => each.Labels[LABEL.serviceId] === serviceId && each.Labels[LABEL.appService] === 'tryton:migrate' && each.State === 'running');

  beforeAll(async () => {
    await buildAppImages(api, tryton, () => undefined);
    await derivedImage(api, BASE_IMAGE, slowImage, [],
      migrateWrapper(`echo "slow migration: waiting ${SLOW_MIGRATION_S} s"\nsleep ${SLOW_MIGRATION_S}\nexec /usr/local/bin/teaminfra-tryton-migrate "$@"`));
    await derivedImage(api, BASE_IMAGE, failingImage, [], migrateWrapper('echo "module upgrade failed: sale"\nexit 3'));
    team = await startDockerTeam();
    serverId = await team.addServer('docker-redeploys');
    await replaceDefinition(BASE_IMAGE);
  }, 20 * 60_000);

  afterAll(async () => {
    await team?.server.close();
    if (serverId) await removeEverythingOf(api, serverId);
    for (const image of [slowImage, failingImage]) await api.json('DELETE', `/images/${encodeURIComponent(image)}`, { accept: [404, 409] });
    await api.close();
  }, 120_000);

  it('starts the service of the registered app and keeps a party made through JSON-RPC', async () => {
    const created = await send(team.server.baseUrl, 'POST', '/api/service-erp', team.token, { server_id: serverId, name: 'Redeployed', app: appName });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    serviceId = created.body.service_id;
    const done = await waitForOperation(team.server.baseUrl, team.token, created.body.id, 120_000);
    password = done.result.initial_credentials.password;
    const accepted = await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, team.token);
    const started = await waitForOperation(team.server.baseUrl, team.token, accepted.body.id, FIRST_START_MS);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    ({ url } = await service());
    const base = url.replace(/\/$/, '');
    const party = await rpc(base, 'model.party.party.create', [[{ name: 'Made before the redeploy' }], {}], await login(base));
    partyId = (party.body!.result as number[])[0]!;
    expect(await partyName(base)).toBe('Made before the redeploy');
  }, FIRST_START_MS + 180_000);

  it(`runs a migration longer than the start deadline (${SLOW_MIGRATION_S} s > ${START_DEADLINE_S} s) while revision 1 answers at the url, then serves revision 2 at the same url`, async () => {
    // An outgoing mail relay set now is not in revision 1's environment: it takes effect at the redeploy.
    const relay = await send(team.server.baseUrl, 'PUT', `/api/service-erp/${serviceId}/outgoing-mail`, team.token, {
      relay: { host: RELAY.host, port: RELAY.port, user: RELAY.user, password: RELAY.password },
    });
    expect(relay.status, JSON.stringify(relay.body)).toBe(200);
    expect(await emailUriOf((await trytonContainers())[0]!.Id)).toBe('');
    await replaceDefinition(slowImage);
    const accepted = await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/redeploy`, team.token);
    expect(accepted.status).toBe(202);
    // Until the operation ends: each time the migrate command runs (its container runs)
    // both before and after a JSON-RPC call at the url, that call is answered: revision 1 serves.
    const seen = { migrating: 0, answeredDuringMigration: 0, notAnswered: [] as string[] };
    const deadline = Date.now() + MIGRATION_MS;
    while (Date.now() < deadline && (await send(team.server.baseUrl, 'GET', `/api/operations/${accepted.body.id}`, team.token)).body.state === 'running') {
      if (await migrating()) {
        seen.migrating += 1;
        const version = await serverVersion(url).catch((error: Error) => `${error.name}: ${error.message}`);
        if (version === 200) {
          if (await migrating()) seen.answeredDuringMigration += 1;
        } else {
          seen.notAnswered.push(String(version));
        }
      }
      await sleep(1_000);
    }
    expect(seen.answeredDuringMigration, JSON.stringify(seen)).toBeGreaterThan(SLOW_MIGRATION_S / 4);
    expect(seen.notAnswered, JSON.stringify(seen)).toEqual([]);
    const done = await waitForOperation(team.server.baseUrl, team.token, accepted.body.id, 60_000);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
    const after = await service();
    expect(after).toMatchObject({ state: 'running', revision: 2, url });
    expect(await partyName(url.replace(/\/$/, ''))).toBe('Made before the redeploy');
    // One Tryton container is left, of revision 2, running the new image.
    const containers = await trytonContainers();
    expect(containers.map((each) => [each.Labels[LABEL.revision], each.State])).toEqual([['2', 'running']]);
    const inspected = await api.json<{ Config: { Image: string } }>('GET', `/containers/${containers[0]!.Id}/json`);
    expect(inspected.Config.Image).toBe(slowImage);
    // Tryton's [email] uri is the relay, its login percent-encoded (trytond reads it with unquote_plus).
    expect(await emailUriOf(containers[0]!.Id)).toBe(
      `smtp://${encodeURIComponent(RELAY.user)}:${encodeURIComponent(RELAY.password)}@${RELAY.host}:${RELAY.port}`);
    expect(JSON.stringify(done)).not.toContain(RELAY.password);
  }, MIGRATION_MS + 120_000);

  it('a migration that fails leaves revision 2 serving at the same url, and the operation says why', async () => {
    await replaceDefinition(failingImage);
    const accepted = await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/redeploy`, team.token);
    const done = await waitForOperation(team.server.baseUrl, team.token, accepted.body.id, 5 * 60_000);
    expect(done.state).toBe('failed');
    expect(done.reason).toBe('Revision 3 did not start (The app\'s migrate command failed (exit code 3); its last output was ' +
      '"module upgrade failed: sale"), so revision 2 keeps serving.');
    expect(await service()).toMatchObject({ state: 'running', revision: 2, url });
    expect(await partyName(url.replace(/\/$/, ''))).toBe('Made before the redeploy');
    expect((await trytonContainers()).map((each) => each.Labels[LABEL.revision])).toEqual(['2']);
  }, 6 * 60_000);

  it('a relay removed while the service is stopped is gone at its next start, from revision 2\'s own image and without a migration', async () => {
    // The definition now names the failing image: a start that made revision 2 from it, or migrated, would fail.
    const stopped = await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, team.token);
    expect((await waitForOperation(team.server.baseUrl, team.token, stopped.body.id, 120_000)).state).toBe('succeeded');
    expect((await send(team.server.baseUrl, 'PUT', `/api/service-erp/${serviceId}/outgoing-mail`, team.token, { relay: null })).status).toBe(200);
    const started = await send(team.server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, team.token);
    const done = await waitForOperation(team.server.baseUrl, team.token, started.body.id, 5 * 60_000);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
    expect(await service()).toMatchObject({ state: 'running', revision: 2, url });
    const containers = await trytonContainers();
    expect(containers.map((each) => [each.Labels[LABEL.revision], each.State])).toEqual([['2', 'running']]);
    expect(await emailUriOf(containers[0]!.Id)).toBe('');
    const inspected = await api.json<{ Image: string }>('GET', `/containers/${containers[0]!.Id}/json`);
    const slow = await api.json<{ Id: string }>('GET', `/images/${encodeURIComponent(slowImage)}/json`);
    expect(inspected.Image).toBe(slow.Id);
    expect(await partyName(url.replace(/\/$/, ''))).toBe('Made before the redeploy');
  }, 8 * 60_000);
});
