// Copies of a Tryton service on a real Docker engine, through REST as a team would: the copy is
// a service of its own (its own network, volumes and secrets) holding the parent's data, users
// and passwords; its scheduled jobs are off before it ever starts; a password reset asked on it
// lands in its mail catcher and nowhere else; deleting it leaves nothing of it on the engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildAppImages } from '../../../src/engine/apps/images/build-app-images.js';
import { readDockerState } from '../../../src/engine/docker/docker-state.js';
import { readServiceSecrets } from '../../../src/engine/docker/service-secrets.js';
import { mailConfigFromEnv } from '../../../src/mail/mail-config.js';
import type { TestServer } from '../../support/fixtures.js';
import { waitForOperation } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam } from './support/docker-team.js';
import { engineObjectsOf as objectsOnEngine, teamCalls } from './support/team-calls.js';
import { createParty, partyNames, rpc, tryton, TRYTON_START_MS, trytonSession } from './support/tryton-app.js';

describe.runIf(dockerAvailable)('copies of a Tryton service on a Docker server', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let parentId: string;
  let parentUrl: string;
  let copyId: string;
  let copyUrl: string;
  let password: string;
  /** Every secret either service was given: the generated ones and the copy's mail-catcher password. */
  const secrets: string[] = [];

  const { answers, call, actAndWait } = teamCalls(() => server.baseUrl, () => token);
  const engineObjectsOf = (id: string) => objectsOnEngine(api, id);
  /** Scheduled jobs of a service: how many there are, and how many are active. */
  const cronCounts = async (url: string) => {
    const session = await trytonSession(url, 'admin', password);
    const count = async (domain: unknown[]) => {
      const answer = await rpc(url, 'model.ir.cron.search_count', [domain, {}], session);
      expect(answer.status, JSON.stringify(answer.error)).toBe(200);
      return answer.result as number;
    };
    return { all: await count([['active', 'in', [true, false]]]), active: await count([['active', '=', true]]) };
  };

  beforeAll(async () => {
    await buildAppImages(api, tryton, () => undefined);
    // Mail as a newcomer's `serve` has it (no TEAMINFRA_SMTP_* at all: the catcher on loopback);
    // only its port is the suite's own, so that suites run side by side.
    const docker = await startDockerTeam({ mail: { ...mailConfigFromEnv({}), port: 0 } });
    ({ server, token } = docker);
    await server.app.mailCatcher.start();
    serverId = await docker.addServer('docker-copies');
    const accepted = await call('POST', '/api/service-erp', { server_id: serverId, name: 'Tryton', app: 'tryton' });
    parentId = accepted.body.service_id;
    password = (await waitForOperation(server.baseUrl, token, accepted.body.id, 120_000)).result.initial_credentials.password;
    expect(await actAndWait('POST', `/api/service-erp/${parentId}/start`, TRYTON_START_MS)).toMatchObject({ state: 'succeeded' });
    parentUrl = (await call('GET', `/api/service-erp/${parentId}`)).body.url;
    const session = await trytonSession(parentUrl, 'admin', password);
    await createParty(parentUrl, session, 'Acme Hosting');
    const user = await rpc(parentUrl, 'model.res.user.create', [[{ name: 'Ann Accountant', login: 'ann', email: 'ann@example.com' }], {}], session);
    expect(user.status, JSON.stringify(user.error)).toBe(200);
  }, TRYTON_START_MS + 20 * 60_000);

  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('copies the running service into a stopped service of its own, with its own network, volumes and secrets', async () => {
    const done = await actAndWait('POST', `/api/service-erp/${parentId}/copies`, 15 * 60_000, { name: 'Staging' });
    copyId = done.service_id;
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded', kind: 'copy' });
    expect((await call('GET', `/api/service-erp/${copyId}`)).body).toMatchObject({ state: 'stopped', parent_id: parentId });
    const row = await server.app.db.kysely.selectFrom('erp_services').select('app').where('id', '=', copyId).executeTakeFirstOrThrow();
    expect(row.app).toBe('tryton');
    expect((await call('GET', `/api/service-erp/${parentId}`)).body).toMatchObject({ state: 'running', url: parentUrl });
    const objects = await engineObjectsOf(copyId);
    // Nothing runs yet; no one-off container of the copy is left.
    expect(objects.containers).toEqual([]);
    expect(objects.volumes).toEqual([`teaminfra-data-${copyId}-database`, `teaminfra-data-${copyId}-files`]);
    expect(objects.networks).toEqual([`teaminfra-net-${copyId}`]);
    const parentSecrets = await readServiceSecrets(server.app.db.kysely, server.app.secrets, parentId);
    const copySecrets = await readServiceSecrets(server.app.db.kysely, server.app.secrets, copyId);
    expect(Object.keys(copySecrets).sort()).toEqual(['ADMIN_PASSWORD', 'DB_PASSWORD']);
    expect(copySecrets.DB_PASSWORD).not.toBe(parentSecrets.DB_PASSWORD);
    const { mail } = await readDockerState(server.app.db.kysely, server.app.secrets, copyId);
    expect(mail?.password).toBeTruthy();
    secrets.push(...Object.values(parentSecrets), ...Object.values(copySecrets), mail!.password);
  }, 16 * 60_000);

  it('starts the copy at its own url, where the parent\'s admin logs in with the parent\'s password and finds the parent\'s party', async () => {
    const started = await actAndWait('POST', `/api/service-erp/${copyId}/start`, TRYTON_START_MS);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    copyUrl = (await call('GET', `/api/service-erp/${copyId}`)).body.url;
    expect(copyUrl).not.toBe(parentUrl);
    const session = await trytonSession(copyUrl, 'admin', password);
    expect(await partyNames(copyUrl, session)).toEqual(['Acme Hosting']);
    // Its own data from now on: a party made in the copy is not in the parent.
    await createParty(copyUrl, session, 'Only in the copy');
    expect(await partyNames(parentUrl, await trytonSession(parentUrl, 'admin', password))).toEqual(['Acme Hosting']);
  }, TRYTON_START_MS + 60_000);

  it('the copy\'s scheduled jobs are all off; the parent\'s still run', async () => {
    const parent = await cronCounts(parentUrl);
    expect(parent.active).toBeGreaterThan(0);
    expect(await cronCounts(copyUrl)).toEqual({ all: parent.all, active: 0 });
  });

  it('a password reset asked on the copy lands in the copy\'s mail catcher, and nothing is sent for the parent', async () => {
    const session = await trytonSession(copyUrl, 'admin', password);
    const [ann] = (await rpc(copyUrl, 'model.res.user.search', [[['login', '=', 'ann']], 0, null, null, {}], session)).result as number[];
    const reset = await rpc(copyUrl, 'model.res.user.reset_password', [[ann], {}], session);
    expect(reset.status, JSON.stringify(reset.error)).toBe(200);
    const deadline = Date.now() + 30_000;
    let emails = (await call('GET', `/api/service-erp/${copyId}/emails`)).body.data as { id: string; to: string[] | string; subject: string }[];
    while (emails.length === 0 && Date.now() < deadline) {
      await sleep(200);
      emails = (await call('GET', `/api/service-erp/${copyId}/emails`)).body.data;
    }
    expect(emails).toHaveLength(1);
    expect(JSON.stringify(emails[0])).toContain('ann@example.com');
    // The catcher holds this one email, filed under the copy: nothing was caught for anyone else.
    const caught = await server.app.db.kysely.selectFrom('caught_emails').select(['copy_id', 'recipients']).execute();
    expect(caught.map((row) => row.copy_id)).toEqual([copyId]);
    expect(caught[0]!.recipients).toContain('ann@example.com');
    // The copy was told the engine's bridge gateway, where the catcher listens besides loopback, and nowhere else.
    const web = (await api.json<{ Id: string; Labels: Record<string, string> }[]>('GET', '/containers/json', {
      query: { filters: JSON.stringify({ label: [`io.teaminfra.service-id=${copyId}`, 'io.teaminfra.app-service=tryton'] }) },
    }))[0]!;
    const env = (await api.json<{ Config: { Env: string[] } }>('GET', `/containers/${web.Id}/json`)).Config.Env;
    const told = /^TRYTOND_EMAIL__URI=smtp:\/\/[^@]+@([\d.]+:\d+)$/.exec(env.find((entry) => entry.startsWith('TRYTOND_EMAIL__URI=')) ?? '')?.[1];
    expect(server.app.mailCatcher.addresses).toEqual([`127.0.0.1:${server.app.mailCatcher.port}`, told]);
  }, 60_000);

  it('deleting the copy leaves nothing of it on the engine nor its secrets; the parent runs on', async () => {
    expect(await actAndWait('DELETE', `/api/service-erp/${copyId}`, 180_000)).toMatchObject({ state: 'succeeded' });
    expect(await engineObjectsOf(copyId)).toEqual({ containers: [], volumes: [], networks: [] });
    expect(await server.app.db.kysely.selectFrom('service_secrets').select('name').where('service_id', '=', copyId).execute()).toEqual([]);
    expect((await call('GET', `/api/service-erp/${parentId}`)).body).toMatchObject({ state: 'running', url: parentUrl });
    expect(await partyNames(parentUrl, await trytonSession(parentUrl, 'admin', password))).toEqual(['Acme Hosting']);
  }, 200_000);

  it('neither service\'s secrets nor the copy\'s mail password are in any answer or reason', async () => {
    expect(secrets).toHaveLength(5);
    const operations = await server.app.db.kysely.selectFrom('operations').select(['reason', 'result', 'parameters']).execute();
    const events = await server.app.db.kysely.selectFrom('events').selectAll().execute();
    for (const text of [...answers, JSON.stringify(operations), JSON.stringify(events)]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });
});
