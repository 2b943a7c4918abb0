// The real compiled `teaminfra serve` killed with SIGKILL in the middle of a redeploy of a service
// its server's proxy serves, then its proxy container removed (as a proxy lost with its
// machine's restart would be): the proxy goes on serving the name while serve is gone, and
// once serve is started again on the same data the name answers again, configured from the
// database, the redeploy ends, and one web container serves.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../../src/db/connect.js';
import { bridgeGateway } from '../../../../src/engine/docker/bridge-gateway.js';
import { proxyContainerName } from '../../../../src/engine/docker/proxy/proxy-container.js';
import { admin, startServe, type ServeProcess } from '../../../support/cli.js';
import { tempDataDir } from '../../../support/fixtures.js';
import { act, send, waitForOperation } from '../../support/engine-http.js';
import { adminDockerTeam } from '../support/docker-team.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, testDockerApi } from '../support/docker-engine.js';
import { pebbleInstalled, startPebble, type Pebble } from './support/pebble.js';

const baseDomain = `apps.sk${randomBytes(4).toString('hex')}.test`;

describe.runIf(dockerAvailable && pebbleInstalled)('teaminfra serve killed while its proxy serves a service', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  let pebble: Pebble;
  let serve: ServeProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let db: SqliteDb;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let trusted: Agent;
  let url: string;

  const status = () => request(`${url}health`, { dispatcher: trusted, signal: AbortSignal.timeout(10_000) })
    .then(async (answer) => (await answer.body.text(), answer.statusCode), () => 0);
  const answersWithin = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (await status() !== 200) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${ms} ms`);
      await sleep(250);
    }
  };
  const webContainers = async () => (await containersOfServer(api, serverId, 'service'))
    .filter((container) => container.Labels['io.teaminfra.service-id'] === serviceId && container.Labels['io.teaminfra.app-service'] === 'erp');

  beforeAll(async () => {
    const gateway = await bridgeGateway(api);
    if (!gateway) throw new Error('The test engine has no default bridge network with an IPv4 gateway.');
    pebble = await startPebble([`IP:${gateway}`]);
    writeFileSync(join(dataDir, 'acme-root.pem'), pebble.directoryCaPem);
    env = {
      TEAMINFRA_ACME_DIRECTORY: `https://${gateway}:${pebble.acmePort}/dir`, TEAMINFRA_ACME_CA_ROOT: join(dataDir, 'acme-root.pem'),
      TEAMINFRA_PROXY_BIND_ADDRESS: '127.0.0.1', TEAMINFRA_DNS_SERVER: pebble.dnsServer, TEAMINFRA_START_TIMEOUT_MS: '30000',
    };
    ({ serverId, token } = await adminDockerTeam(dataDir, 'Proxy crash team'));
    await admin(dataDir, ['set-server-domain', '--server', serverId, '--domain', baseDomain]);
    await admin(dataDir, ['set-server-proxy', '--server', serverId, '--http-port', String(pebble.httpPort), '--https-port', String(pebble.tlsPort)]);
    await pebble.pointName(`crash-erp.${baseDomain}`, '127.0.0.1');
    db = openDatabase(dataDir);
    serve = await startServe(dataDir, [], env);
    const created = await act(serve.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Crash ERP' });
    expect(created.state).toBe('succeeded');
    serviceId = created.service_id as string;
    const started = await act(serve.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    url = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.url as string;
    expect(url).toBe(`https://crash-erp.${baseDomain}:${pebble.tlsPort}/`);
    const root = await pebble.issuingRoot();
    trusted = new Agent({ connect: { ca: root, lookup: (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
      else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
    } } });
    await answersWithin(90_000);
  }, 300_000);

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await trusted?.close();
    await db?.close();
    if (serverId) {
      await removeEverythingOf(api, serverId);
      await api.json('DELETE', `/containers/${proxyContainerName(serverId)}`, { query: { force: 1 }, accept: [404] });
      await api.json('DELETE', `/networks/${proxyContainerName(serverId)}`, { accept: [404, 409] });
      await api.json('DELETE', `/volumes/${proxyContainerName(serverId)}`, { accept: [404, 409] });
    }
    await pebble?.stop();
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the name while serve is gone, and again from the database once serve is back, the proxy made anew', async () => {
    const accepted = await send((serve as ServeProcess).baseUrl, 'POST', `/api/service-erp/${serviceId}/redeploy`, token);
    expect(accepted.status).toBe(202);
    const operationId = accepted.body.id as string;
    // Killed once the new revision's container exists beside the one serving.
    const deadline = Date.now() + 30_000;
    while ((await webContainers()).length < 2 && Date.now() < deadline) await sleep(5);
    expect(await serve?.stop('SIGKILL')).toBeNull();
    serve = undefined;
    expect((db.sqlite.prepare('SELECT state FROM operations WHERE id = ?').get(operationId) as { state: string }).state).toBe('running');
    // The proxy is a container of its own: the name answers with serve gone.
    await answersWithin(20_000);

    await api.json('DELETE', `/containers/${proxyContainerName(serverId)}`, { query: { force: 1 } });
    expect(await status()).toBe(0);
    serve = await startServe(dataDir, [], env);
    const ended = await waitForOperation(serve.baseUrl, token, operationId, 120_000);
    expect(['succeeded', 'failed']).toContain(ended.state);
    await answersWithin(60_000);
    const view = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(view).toMatchObject({ state: 'running', url });
    expect((await webContainers()).filter((container) => container.State === 'running')).toHaveLength(1);
  }, 300_000);
});
