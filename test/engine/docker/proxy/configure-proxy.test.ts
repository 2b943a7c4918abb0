// configureServerProxy, the driver's one call, from the database to a serving proxy: the ports
// the operator set, the platform name under the server's base domain and the team's domain
// routed to the container the driver names, the ACME account made, sealed and registered by
// teaminfra, the installation's ACME settings from the environment (TEAMINFRA_ACME_*), and a
// service the driver does not name answering 421.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../../src/db/connect.js';
import { nowIso } from '../../../../src/db/ids.js';
import { insertServer } from '../../../../src/db/repositories/servers.js';
import { insertService } from '../../../../src/db/repositories/services.js';
import { insertTeam } from '../../../../src/db/repositories/teams.js';
import { bridgeGateway } from '../../../../src/engine/docker/bridge-gateway.js';
import { configureServerProxy } from '../../../../src/engine/docker/proxy/configure-proxy.js';
import { joinProxyNetwork } from '../../../../src/engine/docker/proxy/proxy-container.js';
import { PROXY_IMAGE } from '../../../../src/engine/docker/proxy/proxy-image.js';
import { addServiceDomain } from '../../../../src/engine/domains/service-domains.js';
import { isSealed, SecretBox } from '../../../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../../../src/secrets/secrets-key.js';
import { tempDataDir } from '../../../support/fixtures.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../support/docker-engine.js';
import { pebbleInstalled, startPebble, type Pebble } from './support/pebble.js';

const serverTag = `cfg${randomBytes(4).toString('hex')}`;

describe.runIf(dockerAvailable && pebbleInstalled)('configureServerProxy', () => {
  const api = testDockerApi();
  let pebble: Pebble;
  let dataDir: string;
  let db: SqliteDb;
  let secrets: SecretBox;
  let serverId: string;
  let shopId: string;
  let idleId: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const gateway = await bridgeGateway(api);
    if (!gateway) throw new Error('The test engine has no default bridge network with an IPv4 gateway.');
    pebble = await startPebble([`IP:${gateway}`]);
    dataDir = tempDataDir();
    db = openDatabase(dataDir);
    secrets = new SecretBox(loadSecretsKeys(dataDir));
    const caRoot = join(dataDir, 'acme-ca-root.pem');
    writeFileSync(caRoot, pebble.directoryCaPem);
    // The directory at the engine's gateway: the same address for this process and for the proxy's container.
    env = { TEAMINFRA_ACME_DIRECTORY: `https://${gateway}:${pebble.acmePort}/dir`, TEAMINFRA_ACME_EMAIL: 'ops@example.org', TEAMINFRA_ACME_CA_ROOT: caRoot };
    const teamId = await insertTeam(db.kysely, { name: 'Configured team', plan: 'starter', timezone: 'UTC' });
    serverId = await insertServer(db.kysely, { teamId, name: serverTag });
    await db.kysely.insertInto('docker_servers').values({
      server_id: serverId, docker_host: 'unix:///var/run/docker.sock', image: null, created_at: nowIso(),
      base_domain: `apps.${serverTag}.test`, proxy_http_port: pebble.httpPort, proxy_https_port: pebble.tlsPort,
    }).execute();
    shopId = await insertService(db.kysely, { teamId, serverId, name: 'Shop' });
    idleId = await insertService(db.kysely, { teamId, serverId, name: 'Idle' });
    await addServiceDomain(db.kysely, shopId, `erp.${serverTag}-shop.test`);
    for (const name of [`shop.apps.${serverTag}.test`, `idle.apps.${serverTag}.test`, `erp.${serverTag}-shop.test`]) await pebble.pointName(name, '127.0.0.1');
  }, 60_000);

  afterAll(async () => {
    await removeEverythingOf(api, serverId).catch(() => undefined);
    await db?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await pebble?.stop();
    await api.close();
  });

  it('serves the platform name and the team\'s domain of the service the driver names, and nothing for another', async () => {
    // The first call makes the proxy and its network; the driver then joins its containers to it.
    await configureServerProxy(db.kysely, secrets, api, serverId, new Map(), { bindAddress: '127.0.0.1', env });
    const backend = await api.json<{ Id: string }>('POST', '/containers/create', {
      query: { name: `teaminfra-${serverTag}-web` },
      body: {
        Image: PROXY_IMAGE, Entrypoint: ['caddy'], Cmd: ['respond', '--listen', ':8080', '--body', 'shop says hello'],
        Labels: { 'io.teaminfra.server-id': serverId, 'io.teaminfra.role': 'service' },
      },
    });
    await joinProxyNetwork(api, serverId, backend.Id, 'shop-web');
    await api.json('POST', `/containers/${backend.Id}/start`);
    await configureServerProxy(db.kysely, secrets, api, serverId, new Map([[shopId, { upstream: 'shop-web:8080', healthPath: '/' }]]), { bindAddress: '127.0.0.1', env });

    const root = await pebble.issuingRoot();
    const trusted = new Agent({ connect: { ca: root, lookup: (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
      else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
    } } });
    try {
      for (const name of [`shop.apps.${serverTag}.test`, `erp.${serverTag}-shop.test`]) {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const answer = await request(`https://${name}:${pebble.tlsPort}/`, { dispatcher: trusted, signal: AbortSignal.timeout(10_000) })
            .then(async (got) => ({ status: got.statusCode, text: await got.body.text() }), (error: Error) => ({ status: 0, text: error.message }));
          if (answer.status === 200) {
            expect(answer.text).toBe('shop says hello');
            break;
          }
          if (Date.now() > deadline) throw new Error(`${name} did not answer over HTTPS within 60 s: ${answer.status} ${answer.text}`);
          await sleep(250);
        }
      }
    } finally {
      await trusted.close();
    }
    const row = await db.kysely.selectFrom('docker_servers').select('acme_account_key').where('server_id', '=', serverId).executeTakeFirstOrThrow();
    expect(isSealed(row.acme_account_key!)).toBe(true);
    // The idle service has no platform name yet (it was never routed); the shop's was given now.
    const names = await db.kysely.selectFrom('service_domains').select(['domain', 'service_id']).orderBy('domain').execute();
    expect(names).toEqual([
      { domain: `erp.${serverTag}-shop.test`, service_id: shopId },
      { domain: `shop.apps.${serverTag}.test`, service_id: shopId },
    ]);
    const http = await request(`http://127.0.0.1:${pebble.httpPort}/`, { headers: { host: `idle.apps.${serverTag}.test` }, signal: AbortSignal.timeout(5_000) });
    await http.body.text();
    expect(http.statusCode).toBe(404);
    expect(idleId).toBeTruthy();
  }, 180_000);
});
