// Services of a server with a base domain, over REST, against a real engine, real Caddy and
// Pebble as the ACME CA: a started service answers at https://<slug>.<base domain> through the
// server's proxy with a certificate the CA issued, its url says so, a redeploy under a steady
// load fails no request, a stop takes its name out of the proxy, and the proxy's configuration
// comes back from the database after the proxy container is made again.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, RetryAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeGateway } from '../../../../src/engine/docker/bridge-gateway.js';
import { heldUpstreamName } from '../../../../src/engine/docker/proxy/held-upstream.js';
import { proxyContainerName } from '../../../../src/engine/docker/proxy/proxy-container.js';
import { admin } from '../../../support/cli.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../../support/fixtures.js';
import { act, send } from '../../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from '../support/docker-engine.js';
import { pebbleInstalled, startPebble, type Pebble } from './support/pebble.js';
import { growServiceDatabase } from '../support/service-volume.js';
import { RESENT_AFTER } from './support/resent-after.js';

/** The service's database, grown before its first start. */
const DATA_BYTES = 40_000_000;

const tag = `bp${randomBytes(4).toString('hex')}`;
const baseDomain = `apps.${tag}.test`;
const SETTINGS = ['TEAMINFRA_ACME_DIRECTORY', 'TEAMINFRA_ACME_EMAIL', 'TEAMINFRA_ACME_CA_ROOT', 'TEAMINFRA_PROXY_BIND_ADDRESS', 'TEAMINFRA_DNS_SERVER'];


describe.runIf(dockerAvailable && pebbleInstalled)('ERP services behind their server\'s proxy', () => {
  const api = testDockerApi();
  const saved = Object.fromEntries(SETTINGS.map((name) => [name, process.env[name]]));
  let pebble: Pebble;
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let image: string;
  let trusted: Agent;

  /** A client as browsers are: a request on a keep-alive connection the proxy closed while it was idle is sent again on a new one (RFC 9112, 9.3.1). */
  let browserLike: RetryAgent;
  let resent = 0;
  /** GET through the proxy: every name is this machine, the client trusts Pebble's root. */
  const get = (url: string) => request(url, { dispatcher: browserLike, signal: AbortSignal.timeout(20_000) })
    .then(async (answer) => ({ status: answer.statusCode, text: await answer.body.text() }), (error: Error) => ({ status: 0, text: error.message }));
  const answersWithin = async (url: string, ms: number) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const answer = await get(url);
      if (answer.status === 200) return answer;
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${ms} ms: ${answer.status} ${answer.text}`);
      await sleep(250);
    }
  };

  beforeAll(async () => {
    const gateway = await bridgeGateway(api);
    if (!gateway) throw new Error('The test engine has no default bridge network with an IPv4 gateway.');
    pebble = await startPebble([`IP:${gateway}`]);
    const caRoot = join(await import('node:os').then((os) => os.tmpdir()), `${tag}-acme-root.pem`);
    writeFileSync(caRoot, pebble.directoryCaPem);
    Object.assign(process.env, {
      TEAMINFRA_ACME_DIRECTORY: `https://${gateway}:${pebble.acmePort}/dir`, TEAMINFRA_ACME_EMAIL: 'ops@example.org',
      TEAMINFRA_ACME_CA_ROOT: caRoot, TEAMINFRA_PROXY_BIND_ADDRESS: '127.0.0.1', TEAMINFRA_DNS_SERVER: pebble.dnsServer,
    });
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0, startTimeoutMs: 30_000, proxySyncIntervalMs: 0, healthIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    image = (await admin(server.dataDir, ['build-erp-image', '--docker-host', TEST_DOCKER_HOST])).image;
    serverId = (await admin(server.dataDir, ['create-server', '--team', team.teamId, '--name', 'proxied', '--docker-host', TEST_DOCKER_HOST, '--image', image])).id;
    await admin(server.dataDir, ['set-server-domain', '--server', serverId, '--domain', baseDomain]);
    await admin(server.dataDir, ['set-server-proxy', '--server', serverId, '--http-port', String(pebble.httpPort), '--https-port', String(pebble.tlsPort)]);
    await pebble.pointName(`shop.${baseDomain}`, '127.0.0.1');
    const root = await pebble.issuingRoot();
    trusted = new Agent({ connect: { ca: root, lookup: (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
      else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
    } } });
    // Only a connection closed before any answer is retried: a status, 5xx included, is an answer and counts.
    browserLike = new RetryAgent(trusted, {
      statusCodes: [],
      retry: (error, { state }, callback) => {
        const code = (error as { code?: string }).code ?? '';
        if (state.counter > 2 || !RESENT_AFTER.includes(code)) {
          callback(error);
          return;
        }
        resent++;
        setTimeout(() => callback(null), 10);
      },
    });
  }, 300_000);

  afterAll(async () => {
    await trusted?.close();
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    if (serverId) {
      await api.json('DELETE', `/containers/${proxyContainerName(serverId)}`, { query: { force: 1 }, accept: [404] });
      await api.json('DELETE', `/networks/${proxyContainerName(serverId)}`, { accept: [404] });
      await api.json('DELETE', `/volumes/${proxyContainerName(serverId)}`, { accept: [404] });
    }
    await pebble?.stop();
    await api.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  /** Sends requests without pause to `url` while `work` runs (and 1 s after): how many, and those that failed. */
  const underLoad = async <T>(url: string, work: () => Promise<T>) => {
    let sent = 0;
    const failures: string[] = [];
    let loading = true;
    const load = (async () => {
      while (loading) {
        const answer = await get(url);
        sent += 1;
        if (answer.status !== 200) failures.push(`${answer.status} ${answer.text.slice(0, 120)}`);
      }
    })();
    try {
      const result = await work();
      await sleep(1_000);
      return { result, sent, failures };
    } finally {
      loading = false;
      await load;
    }
  };

  it('starts a service at https://<slug>.<base domain>, served by the proxy with a certificate the CA issued', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Shop' });
    expect(created).toMatchObject({ state: 'succeeded' });
    serviceId = created.service_id;
    // Data of a real size: the restore's swap below stops, backs up and loads tens of MB, not the demo's few KB.
    expect(await growServiceDatabase({ api, db: server.app.db.kysely, image, serverId }, serviceId, DATA_BYTES)).toBeGreaterThan(DATA_BYTES);
    const started = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    const view = (await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(view.url).toBe(`https://shop.${baseDomain}:${pebble.tlsPort}/`);
    expect(view.domains).toEqual([expect.objectContaining({ domain: `shop.${baseDomain}` })]);
    const health = await answersWithin(`${view.url}health`, 90_000);
    expect(JSON.parse(health.text)).toMatchObject({ service_id: serviceId });
    // No front container: the proxy is the way in.
    const fronts = await api.json<unknown[]>('GET', '/containers/json', { query: { all: 1, filters: JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`, 'io.teaminfra.role=front'] }) } });
    expect(fronts).toEqual([]);
    // HTTP sends the name to HTTPS.
    const plain = await request(`http://127.0.0.1:${pebble.httpPort}/health`, { headers: { host: `shop.${baseDomain}` }, signal: AbortSignal.timeout(5_000) });
    await plain.body.text();
    expect(plain.statusCode).toBeGreaterThanOrEqual(301);
    expect(String(plain.headers.location)).toBe(`https://shop.${baseDomain}:${pebble.tlsPort}/health`);
    // The keeper reads the proxy's certificates into the name's state.
    await server.app.engine.proxies.tick();
    const domains = (await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.domains;
    expect(domains[0].certificate).toMatchObject({ state: 'issued' });
  }, 300_000);

  it('fails no request sent without pause through a redeploy', async () => {
    const { result: redeployed, sent, failures } = await underLoad(`https://shop.${baseDomain}:${pebble.tlsPort}/health`,
      () => act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/redeploy`));
    expect(redeployed, JSON.stringify(redeployed)).toMatchObject({ state: 'succeeded' });
    expect(sent).toBeGreaterThan(20);
    expect(failures).toEqual([]);
    expect(resent).toBeLessThan(sent / 5);
  }, 300_000);


  it('fails no request sent without pause through a restore\'s swap: the proxy holds them for the restored revision', async () => {
    const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect(backup).toMatchObject({ state: 'succeeded' });
    // Random names: the archive stays tens of MB, which the swap loads while requests wait.
    expect((await send(server.baseUrl, 'GET', `/api/backups/${backup.backup_id}`, token)).body.size_bytes).toBeGreaterThan(DATA_BYTES / 3);
    const { result: restored, sent, failures } = await underLoad(`https://shop.${baseDomain}:${pebble.tlsPort}/health`,
      () => act(server.baseUrl, token, 'POST', `/api/backups/${backup.backup_id}/restore`));
    expect(restored, JSON.stringify(restored)).toMatchObject({ state: 'succeeded' });
    expect(sent).toBeGreaterThan(5);
    expect(failures).toEqual([]);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.url).toBe(`https://shop.${baseDomain}:${pebble.tlsPort}/`);
  }, 300_000);

  it('holds the requests again when a restore finds its row held already (a crash between the row and the push of the route)', async () => {
    const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect(backup).toMatchObject({ state: 'succeeded' });
    // What a kill -9 of serve can leave, and the restore resumed after it finds: the row names the
    // held upstream, while the proxy still sends requests to the serving container.
    const db = server.app.db.kysely;
    const { proxy_upstream: upstream } = await db.selectFrom('erp_services').select('proxy_upstream').where('id', '=', serviceId).executeTakeFirstOrThrow();
    expect(upstream).not.toContain('restored');
    await db.updateTable('erp_services').set({ proxy_upstream: `${heldUpstreamName(serviceId)}:${upstream!.split(':')[1]}` }).where('id', '=', serviceId).execute();
    const { result: restored, sent, failures } = await underLoad(`https://shop.${baseDomain}:${pebble.tlsPort}/health`,
      () => act(server.baseUrl, token, 'POST', `/api/backups/${backup.backup_id}/restore`));
    expect(restored, JSON.stringify(restored)).toMatchObject({ state: 'succeeded' });
    expect(sent).toBeGreaterThan(5);
    expect(failures).toEqual([]);
  }, 300_000);

  it('serves a second service of the server under its own name only, and its start fails no request of the first', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Books' });
    expect(created).toMatchObject({ state: 'succeeded' });
    const booksId = created.service_id as string;
    await pebble.pointName(`books.${baseDomain}`, '127.0.0.1');
    const { result: started, failures } = await underLoad(`https://shop.${baseDomain}:${pebble.tlsPort}/health`,
      () => act(server.baseUrl, token, 'POST', `/api/service-erp/${booksId}/start`));
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    expect(failures).toEqual([]);
    const books = await answersWithin(`https://books.${baseDomain}:${pebble.tlsPort}/health`, 90_000);
    expect(JSON.parse(books.text)).toMatchObject({ service_id: booksId });
    // Each name answers for its own service (a Host that is not the TLS name gets 421: proxy-container.test.ts).
    const shop = await get(`https://shop.${baseDomain}:${pebble.tlsPort}/health`);
    expect(JSON.parse(shop.text)).toMatchObject({ service_id: serviceId });
    expect((await act(server.baseUrl, token, 'DELETE', `/api/service-erp/${booksId}`))).toMatchObject({ state: 'succeeded' });
  }, 300_000);

  it('watches a served service\'s health through the proxy, and a name still without a certificate over the proxy\'s network', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Unpointed' });
    const unpointedId = created.service_id as string;
    // Its name points nowhere: the CA cannot validate it, so the proxy has no certificate to offer.
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${unpointedId}/start`)).toMatchObject({ state: 'succeeded' });
    // Three failed checks in a row would make it unhealthy.
    for (let pass = 0; pass < 3; pass++) expect((await server.app.engine.health.tick()).unhealthy).toEqual([]);
    for (const id of [serviceId, unpointedId]) {
      expect((await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body).toMatchObject({ health: 'healthy' });
    }
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${unpointedId}`, token)).body.domains[0].certificate.state).not.toBe('issued');
    expect(await act(server.baseUrl, token, 'DELETE', `/api/service-erp/${unpointedId}`)).toMatchObject({ state: 'succeeded' });
  }, 300_000);

  it('answers every name again, configured from the database, once the proxy container is made again', async () => {
    await api.json('DELETE', `/containers/${proxyContainerName(serverId)}`, { query: { force: 1 } });
    await server.app.engine.proxies.tick();
    await answersWithin(`https://shop.${baseDomain}:${pebble.tlsPort}/health`, 60_000);
  }, 180_000);

  it('takes a stopped service out of the proxy: its name answers no more and its url is null', async () => {
    const stopped = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`);
    expect(stopped).toMatchObject({ state: 'succeeded' });
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.url).toBeNull();
    const answer = await get(`https://shop.${baseDomain}:${pebble.tlsPort}/health`);
    expect(answer.status).not.toBe(200);
  }, 180_000);
});
