// A Tryton service made through REST with `"app": "tryton"` on a real Docker engine: PostgreSQL
// and Tryton in their own containers on the service's network, the database password and the
// admin password generated and sealed, the admin's first login given once to the creating token,
// and a delete that leaves nothing of the service on the engine. The proof that it is a working
// ERP is asked over JSON-RPC at the service's url, as a team would. Images: `admin
// build-app-images --app tryton` (cached on this machine after the first build).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledApp } from '../../../src/engine/apps/bundled-apps.js';
import { buildAppImages } from '../../../src/engine/apps/images/build-app-images.js';
import { LABEL } from '../../../src/engine/docker/labels.js';
import { makeToken, type SeededTeam, type TestServer } from '../../support/fixtures.js';
import { send, waitForOperation } from '../support/engine-http.js';
import { startDockerTeam } from './support/docker-team.js';
import { engineObjectsOf as objectsOnEngine, teamCalls } from './support/team-calls.js';
import { containersOfServer, dockerAvailable, networksOfServer, removeEverythingOf, testDockerApi, volumesOfServer } from './support/docker-engine.js';

const tryton = bundledApp('tryton')!;
/** A first start makes the database (trytond-admin with four modules): a minute or two on a shared machine. */
const START_MS = tryton.deadlines.startMs * 2 + 5 * 60_000;

/** One JSON-RPC call; `session` is the `Authorization: Session` value after a login. */
async function rpc(base: string, method: string, params: unknown[], session?: string) {
  const response = await fetch(`${base}/tryton/`, {
    method: 'POST', signal: AbortSignal.timeout(30_000),
    headers: { 'content-type': 'application/json', ...(session ? { authorization: `Session ${session}` } : {}) },
    body: JSON.stringify({ id: 1, method, params }),
  });
  const text = await response.text();
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) as { result?: unknown; error?: unknown } : text };
}

describe.runIf(dockerAvailable)('a Tryton service (app "tryton") on a Docker server', () => {
  const api = testDockerApi();
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let otherToken: string;
  let serverId: string;
  let serviceId: string;
  let createOperationId: string;
  let password: string;
  let startOperationId: string;
  /** When the first start's migrate step ran, give or take the engine's and our clocks' second. */
  let migrateWindow: { from: number; to: number };
  /** What the control plane wrote to stdout and stderr while the suite ran. */
  const output: string[] = [];
  const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

  const { answers, call, actAndWait } = teamCalls(() => server.baseUrl, () => token);
  const engineObjectsOf = (id: string) => objectsOnEngine(api, id);

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => { output.push(String(chunk)); return writes.out(chunk, ...rest); }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => { output.push(String(chunk)); return writes.err(chunk, ...rest); }) as typeof process.stderr.write;
    // Cached on this machine: a second; a first build takes minutes (debootstrap, apt).
    await buildAppImages(api, tryton, () => undefined);
    const docker = await startDockerTeam();
    ({ server, team, token } = docker);
    otherToken = (await makeToken(server.app, team.teamId, { name: 'another token' })).value;
    serverId = await docker.addServer('docker-apps');
  }, 20 * 60_000);

  afterAll(async () => {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('refuses an app no one registered, and app tryton on a server of local processes, each with a sentence', async () => {
    const unknown = await call('POST', '/api/service-erp', { server_id: serverId, name: 'X', app: 'odoo-17' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toBe('There is no app named "odoo-17". The operator registers apps (teaminfra admin list-apps shows them); demo and tryton are bundled.');
    const local = await call('POST', '/api/service-erp', { server_id: team.serverIds[0], name: 'X', app: 'tryton' });
    expect(local.status).toBe(409);
    expect(local.body.detail).toBe(`Server ${team.serverIds[0]} runs its ERP services as local processes, which can run only the demo app; ` +
      'the app tryton needs a server that is a Docker engine.');
    // app demo on a local server is today's service.
    const demo = await call('POST', '/api/service-erp', { server_id: team.serverIds[0], name: 'Demo', app: 'demo' });
    expect(demo.status).toBe(202);
  });

  it('creates the service with its network, its two volumes and sealed secrets, and gives the admin login to the creating token only', async () => {
    const accepted = await call('POST', '/api/service-erp', { server_id: serverId, name: 'Tryton', app: 'tryton' });
    expect(accepted.status).toBe(202);
    expect(accepted.body.result).toBeNull();
    createOperationId = accepted.body.id;
    serviceId = accepted.body.service_id;
    const done = await waitForOperation(server.baseUrl, token, createOperationId, 120_000);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded', result: { initial_credentials: { login: 'admin' } } });
    password = done.result.initial_credentials.password;
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // Shown once: the answer above was the first to show the create succeeded; every later
    // answer, its list included, says when they were shown instead; another token of the team
    // sees nothing.
    const again = (await call('GET', `/api/operations/${createOperationId}`)).body;
    expect(again.result.initial_credentials_shown).toMatch(/^The initial credentials were shown once, at .+, in the answer of get_operation over REST, and are kept nowhere since\.$/);
    const mine = (await call('GET', '/api/operations?limit=200')).body.data.find((each: { id: string }) => each.id === createOperationId);
    expect(mine.result).toEqual(again.result);
    expect((await call('GET', `/api/operations/${createOperationId}`, undefined, otherToken)).body).toMatchObject({ state: 'succeeded', result: null });
    const theirs = (await call('GET', '/api/operations?limit=200', undefined, otherToken)).body.data.find((each: { id: string }) => each.id === createOperationId);
    expect(theirs.result).toBeNull();

    const objects = await engineObjectsOf(serviceId);
    expect(objects.containers).toEqual([]);
    expect(objects.volumes.sort()).toEqual([`teaminfra-data-${serviceId}-database`, `teaminfra-data-${serviceId}-files`]);
    expect(objects.networks).toEqual([`teaminfra-net-${serviceId}`]);
    const secrets = await server.app.db.kysely.selectFrom('service_secrets').select(['name', 'sealed']).where('service_id', '=', serviceId).orderBy('name').execute();
    expect(secrets.map((row) => row.name)).toEqual(['ADMIN_PASSWORD', 'DB_PASSWORD']);
    for (const row of secrets) expect(row.sealed).toMatch(/^tsec1:/);
    const stored = await server.app.db.kysely.selectFrom('operations').select('result').where('id', '=', createOperationId).executeTakeFirstOrThrow();
    expect(stored.result).not.toContain(password);
    expect(stored.result).not.toContain('tsec1:');
  }, 180_000);

  it('starts PostgreSQL, then the migration, then Tryton at the service url: JSON-RPC answers, the admin logs in, a party reads back', async () => {
    const started = await actAndWait('POST', `/api/service-erp/${serviceId}/start`, START_MS);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded', result: null });
    startOperationId = started.id;
    // Each part of the first start is a step of its own, in the order it ran, within the start's own step.
    const steps = (await call('GET', `/api/operations/${started.id}`)).body.steps as { step: string; at: string; duration_ms: number; outcome: string; detail: string | null }[];
    const parts = steps.filter((each) => each.step !== 'Checked what runs' && !each.step.startsWith('Chose port'));
    expect(parts.map((each) => [each.step, each.outcome]), JSON.stringify(steps)).toEqual([
      ['Started the service', 'done'],
      ['Waited for the database container to be healthy', 'done'],
      ["Ran the app's migrate command", 'done'],
      ['The process was created', 'done'],
      ['Waited for the tryton container to answer /health', 'done'],
    ]);
    const [whole, , migrate, , web] = parts as [typeof steps[0], typeof steps[0], typeof steps[0], typeof steps[0], typeof steps[0]];
    expect(migrate.detail).toBe("Its output is in the service's logs as the container tryton:migrate.");
    // trytond-admin makes the database with four modules: seconds at least, and most of the start.
    expect(migrate.duration_ms).toBeGreaterThan(1_000);
    expect(web.duration_ms).toBeGreaterThan(0);
    expect(Date.parse(web.at) + web.duration_ms).toBeLessThanOrEqual(Date.parse(whole.at) + whole.duration_ms);
    migrateWindow = { from: Date.parse(migrate.at) - 1_000, to: Date.parse(migrate.at) + migrate.duration_ms + 1_000 };
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running' });
    const base = service.url.replace(/\/$/, '');

    const version = await fetch(`${base}/`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 1, method: 'common.server.version', params: [] }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(version.status).toBe(200);
    expect(((await version.json()) as { result: string }).result).toMatch(/^6\.0\.\d+$/);
    expect((await rpc(base, 'common.db.login', ['admin', { password: 'not-the-password' }, 'en'])).status).toBe(401);
    const login = await rpc(base, 'common.db.login', ['admin', { password }, 'en']);
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const [userId, key] = (login.body as { result: [number, string] }).result;
    const session = Buffer.from(`admin:${userId}:${key}`).toString('base64');
    const created = await rpc(base, 'model.party.party.create', [[{ name: 'Acme Hosting' }], {}], session);
    const [partyId] = (created.body as { result: number[] }).result;
    const read = await rpc(base, 'model.party.party.read', [[partyId], ['name'], {}], session);
    expect((read.body as { result: { name: string }[] }).result[0]!.name).toBe('Acme Hosting');

    // Only the web container is published; the database is reached on the service's network alone.
    const containers = await containersOfServer(api, serverId, 'service');
    const mine = containers.filter((each) => each.Labels[LABEL.serviceId] === serviceId);
    // The migrate command's container is kept, exited, for its output (the logs below).
    expect(mine.map((each) => each.Labels[LABEL.appService]).sort()).toEqual(['database', 'tryton', 'tryton:migrate']);
    const published = await Promise.all(mine.map(async (each) => {
      const inspected = await api.json<{ NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } }>('GET', `/containers/${each.Id}/json`);
      return [each.Labels[LABEL.appService], Object.values(inspected.NetworkSettings.Ports).some((bindings) => (bindings ?? []).length > 0)];
    }));
    expect(Object.fromEntries(published)).toEqual({ database: false, tryton: true, 'tryton:migrate': false });
  }, START_MS + 60_000);

  it('answers its logs from its containers and its migration, each line labelled database, tryton or tryton:migrate, in time order; its metrics add both up', async () => {
    const logs = (await call('GET', `/api/service-erp/${serviceId}/logs?tail=5000`)).body as { lines: { container: string; at: string; text: string }[] };
    expect(new Set(logs.lines.map((line) => line.container))).toEqual(new Set(['database', 'tryton', 'tryton:migrate']));
    const times = logs.lines.map((line) => Date.parse(line.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The migrate command's output, written while its step ran, read after its container ended: the
    // first migration's trytond-admin prints only its prompt for the admin's email (no newline after it).
    const migrated = logs.lines.filter((line) => line.container === 'tryton:migrate');
    expect(migrated.map((line) => line.text), `the lines of tryton:migrate after start ${startOperationId}`).toEqual(['"admin" email for "tryton": ']);
    for (const line of migrated) expect(Date.parse(line.at)).toBeGreaterThanOrEqual(migrateWindow.from);
    for (const line of migrated) expect(Date.parse(line.at)).toBeLessThanOrEqual(migrateWindow.to);
    const metrics = (await call('GET', `/api/service-erp/${serviceId}/metrics`)).body;
    expect(metrics).toMatchObject({ state: 'running', running: true, restarts: 0 });
    // PostgreSQL alone holds tens of MB resident; its data directory is tens of MB on disk.
    expect(metrics.memory_bytes).toBeGreaterThan(20_000_000);
    expect(metrics.data_bytes).toBeGreaterThan(20_000_000);
  }, 60_000);

  it('stops every container, and starts the same containers again (so no second migration) on the same data at the same url', async () => {
    const before = (await call('GET', `/api/service-erp/${serviceId}`)).body.url;
    const idsOf = async () => (await containersOfServer(api, serverId, 'service')).filter((each) => each.Labels[LABEL.serviceId] === serviceId)
      .map((each) => each.Id).sort();
    const containersBefore = await idsOf();
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/stop`, 60_000)).toMatchObject({ state: 'succeeded' });
    const stopped = (await containersOfServer(api, serverId, 'service')).filter((each) => each.Labels[LABEL.serviceId] === serviceId);
    expect(stopped.map((each) => each.State)).toEqual(['exited', 'exited', 'exited']);
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body).toMatchObject({ state: 'stopped' });
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, START_MS)).toMatchObject({ state: 'succeeded' });
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running', url: before });
    // The web container of this revision already existed: the driver runs migrate only before one is created.
    expect(await idsOf()).toEqual(containersBefore);
    const login = await rpc(service.url.replace(/\/$/, ''), 'common.db.login', ['admin', { password }, 'en']);
    expect(login.status).toBe(200);
  }, START_MS + 120_000);

  it('delete leaves nothing of the service on the engine (containers, volumes, network) nor its secrets', async () => {
    expect(await actAndWait('DELETE', `/api/service-erp/${serviceId}`, 120_000)).toMatchObject({ state: 'succeeded' });
    expect(await engineObjectsOf(serviceId)).toEqual({ containers: [], volumes: [], networks: [] });
    const secrets = await server.app.db.kysely.selectFrom('service_secrets').select('name').where('service_id', '=', serviceId).execute();
    expect(secrets).toEqual([]);
    expect((await volumesOfServer(api, serverId)).map((each) => each.Name).filter((name) => name.includes(serviceId))).toEqual([]);
    expect((await networksOfServer(api, serverId)).map((each) => each.Name).filter((name) => name.includes(serviceId))).toEqual([]);
  }, 180_000);

  it('the admin password is in no other answer, no log line, no reason, and nowhere in the database in clear', async () => {
    expect(password).toBeTruthy();
    const events = await server.app.db.kysely.selectFrom('events').selectAll().execute();
    const operations = await server.app.db.kysely.selectFrom('operations').select(['reason', 'result', 'parameters']).execute();
    const audit = await server.app.db.kysely.selectFrom('audit_log').selectAll().execute();
    for (const text of [...answers, output.join(''), JSON.stringify(events), JSON.stringify(operations), JSON.stringify(audit)]) {
      expect(text).not.toContain(password);
    }
    // Every file of the data directory (the SQLite database and its log included).
    const files = readdirSync(server.dataDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files.length).toBeGreaterThan(0);
    for (const entry of files) expect(readFileSync(join(entry.parentPath, entry.name)).includes(password)).toBe(false);
  });
});
