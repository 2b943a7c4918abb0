// A service moved between two servers that have base domains, each engine with its own proxy
// (a second dockerd for the second server): the new server's proxy serves its platform name,
// moved under the new base domain with its slug, and its team's domain, the old one no longer
// serves them, the move's result says which DNS record to change, and a rollback brings the name
// back. The ACME directory is a closed port of this machine: serving never waits on the CA (no
// certificate is issued, so the names are looked at over HTTP, where the proxy sends its own
// names to HTTPS and answers 404 to any other).
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureProxyImage } from '../../../../src/engine/docker/proxy/proxy-image.js';
import { proxyContainerName } from '../../../../src/engine/docker/proxy/proxy-container.js';
import { admin } from '../../../support/cli.js';
import type { TestServer } from '../../../support/fixtures.js';
import { copyImages } from '../../../offsite/support/copied-images.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../support/docker-engine.js';
import { startDockerTeam } from '../support/docker-team.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from '../support/second-engine.js';
import { teamCalls } from '../support/team-calls.js';
import { freePort } from './support/pebble.js';

const tag = `mv${randomBytes(4).toString('hex')}`;
const SETTINGS = ['TEAMINFRA_ACME_DIRECTORY', 'TEAMINFRA_PROXY_BIND_ADDRESS'];

describe.runIf(dockerAvailable && secondEngineStartable)('a service moved between servers with base domains', () => {
  const api = testDockerApi();
  const saved = Object.fromEntries(SETTINGS.map((name) => [name, process.env[name]]));
  let second: SecondEngine;
  let server: TestServer;
  let token: string;
  let here: string;
  let there: string;
  const ports = { here: { http: 0, https: 0 }, there: { http: 0, https: 0 } };
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);

  /** The status the proxy on `httpPort` answers over HTTP for `name`: 308 for a name it serves, 404 for any other. */
  const overHttp = async (httpPort: number, name: string) => {
    const answer = await request(`http://127.0.0.1:${httpPort}/health`, { headers: { host: name }, signal: AbortSignal.timeout(10_000) });
    await answer.body.text();
    return { status: answer.statusCode, location: answer.headers.location };
  };

  beforeAll(async () => {
    Object.assign(process.env, { TEAMINFRA_ACME_DIRECTORY: `https://127.0.0.1:${await freePort()}/dir`, TEAMINFRA_PROXY_BIND_ADDRESS: '127.0.0.1' });
    second = await startSecondEngine();
    const docker = await startDockerTeam({ engine: { proxySyncIntervalMs: 0 } });
    ({ server, token } = docker);
    const proxy = await ensureProxyImage(api);
    await copyImages(api, second.api, [docker.image, proxy.image]);
    here = await docker.addServer('here');
    there = (await admin(server.dataDir, ['create-server', '--team', docker.teamId, '--name', 'there', '--docker-host', second.host, '--image', docker.image])).id as string;
    for (const [key, id] of [['here', here], ['there', there]] as const) {
      ports[key] = { http: await freePort(), https: await freePort() };
      await admin(server.dataDir, ['set-server-domain', '--server', id, '--domain', `apps.${key}-${tag}.test`]);
      await admin(server.dataDir, ['set-server-proxy', '--server', id, '--http-port', String(ports[key].http), '--https-port', String(ports[key].https)]);
    }
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    for (const [engine, id] of [[api, here], [second?.api, there]] as const) {
      if (!engine || !id) continue;
      await removeEverythingOf(engine, id).catch(() => undefined);
      await engine.json('DELETE', `/containers/${proxyContainerName(id)}`, { query: { force: 1 }, accept: [404] }).catch(() => undefined);
      await engine.json('DELETE', `/networks/${proxyContainerName(id)}`, { accept: [404, 409] }).catch(() => undefined);
      await engine.json('DELETE', `/volumes/${proxyContainerName(id)}`, { accept: [404, 409] }).catch(() => undefined);
    }
    await second?.stop();
    await api.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }, 180_000);

  it('serves it from the new server at its name under the new base domain, and again from the old one after a rollback', async () => {
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: here, name: 'Shop' });
    const serviceId = created.service_id as string;
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    const custom = `erp.${tag}-shop.test`;
    expect((await call('POST', `/api/service-erp/${serviceId}/domains`, { domain: custom })).status).toBe(200);
    // The team's domain is routed from the next push of the server's routes.
    await server.app.engine.proxies.tick();
    const hereName = `shop.apps.here-${tag}.test`;
    const thereName = `shop.apps.there-${tag}.test`;
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body.url).toBe(`https://${hereName}:${ports.here.https}/`);
    expect(await overHttp(ports.here.http, hereName)).toMatchObject({ status: 308 });
    expect(await overHttp(ports.here.http, custom)).toMatchObject({ status: 308 });

    const moved = await actAndWait('POST', `/api/service-erp/${serviceId}/move`, 300_000, { server_id: there });
    expect(moved, JSON.stringify(moved)).toMatchObject({ state: 'succeeded', server_id: there });
    expect(moved.result.dns_change).toBe(`Point ${custom} at the address of apps.there-${tag}.test; the new server serves it once the DNS says so.`);
    const view = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(view.url).toBe(`https://${thereName}:${ports.there.https}/`);
    expect(view.domains.map((each: { domain: string }) => each.domain)).toEqual([thereName, custom]);
    expect(await overHttp(ports.there.http, thereName)).toMatchObject({ status: 308, location: `https://${thereName}:${ports.there.https}/health` });
    expect(await overHttp(ports.there.http, custom)).toMatchObject({ status: 308 });
    expect(await overHttp(ports.here.http, hereName)).toMatchObject({ status: 404 });
    expect(await overHttp(ports.here.http, custom)).toMatchObject({ status: 404 });

    const back = await actAndWait('POST', `/api/service-erp/${serviceId}/move/rollback`, 300_000);
    expect(back, JSON.stringify(back)).toMatchObject({ state: 'succeeded' });
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body.url).toBe(`https://${hereName}:${ports.here.https}/`);
    expect(await overHttp(ports.here.http, hereName)).toMatchObject({ status: 308 });
    expect(await overHttp(ports.there.http, thereName)).toMatchObject({ status: 404 });
  }, 900_000);
});
