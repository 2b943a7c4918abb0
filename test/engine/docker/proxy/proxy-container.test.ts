// A server's proxy for real: the proxy image (Debian's Caddy) on the Docker engine, configured
// only through its admin API, certificates from a real ACME CA (Debian's Pebble) on loopback
// whose DNS server (pebble-challtestsrv) points the test's names at the proxy's published ports,
// and services that are small HTTP containers on the proxy's network. Every answer over HTTPS
// is checked against Pebble's own root, never with verification switched off.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, RetryAgent, request, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { newAccountKeyPem, registerAcmeAccount } from '../../../../src/engine/docker/proxy/acme-account.js';
import type { CaddyAdmin } from '../../../../src/engine/docker/proxy/caddy-admin.js';
import { buildCaddyConfig, type ProxyRoute } from '../../../../src/engine/docker/proxy/caddy-config.js';
import { readStoredCertificates } from '../../../../src/engine/docker/proxy/certificate-readings.js';
import { watchCertificates } from '../../../../src/engine/docker/proxy/watch-certificates.js';
import { openDatabase } from '../../../../src/db/connect.js';
import { nowIso } from '../../../../src/db/ids.js';
import { listEvents } from '../../../../src/db/repositories/events.js';
import { insertServer } from '../../../../src/db/repositories/servers.js';
import { insertService } from '../../../../src/db/repositories/services.js';
import { insertTeam } from '../../../../src/db/repositories/teams.js';
import { resolverFromEnv } from '../../../../src/engine/domains/name-lookup.js';
import { addServiceDomain, listServiceDomains } from '../../../../src/engine/domains/service-domains.js';
import { tempDataDir } from '../../../support/fixtures.js';
import { CONTAINER_ACME_CA_ROOT, ensureProxy, proxyContainerName, proxyNetworkName } from '../../../../src/engine/docker/proxy/proxy-container.js';
import { PROXY_IMAGE } from '../../../../src/engine/docker/proxy/proxy-image.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../support/docker-engine.js';
import { pebbleInstalled, startPebble, type Pebble } from './support/pebble.js';
import { RESENT_AFTER } from './support/resent-after.js';

const serverId = `proxytest${randomBytes(4).toString('hex')}`;

/** A tiny HTTP service: socat answers each request with its name and path; /slow waits 2 s first. */
async function startBackend(api: DockerApi, name: string): Promise<string> {
  const script = 'read -r method path rest; case "$path" in /slow*) sleep 2;; esac; ' +
    'printf "HTTP/1.0 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\n%s %s\\n" "$NAME" "$path"';
  const created = await api.json<{ Id: string }>('POST', '/containers/create', {
    query: { name: `teaminfra-${serverId}-${name}` },
    body: {
      // The handler goes through a file: socat would read an address's backslashes and commas as its own.
      Image: PROXY_IMAGE, User: 'caddy', Env: [`NAME=${name}`, `HANDLER=${script}`], Entrypoint: ['sh', '-c'],
      Cmd: ['printf "%s" "$HANDLER" > /tmp/handler.sh && exec socat TCP-LISTEN:8080,fork,reuseaddr "EXEC:sh /tmp/handler.sh"'],
      Labels: { 'io.teaminfra.server-id': serverId, 'io.teaminfra.role': 'service' },
      HostConfig: { NetworkMode: proxyNetworkName(serverId) },
      NetworkingConfig: { EndpointsConfig: { [proxyNetworkName(serverId)]: { Aliases: [name] } } },
    },
  });
  await api.json('POST', `/containers/${created.Id}/start`);
  return created.Id;
}


describe.runIf(dockerAvailable && pebbleInstalled)('a server proxy (Caddy) with certificates from a real ACME CA', () => {
  const api = testDockerApi();
  let pebble: Pebble;
  let admin: CaddyAdmin;
  let trusted: Agent;
  let accountKeyPem: string;
  const names = { shop: `shop.${serverId}.test`, custom: `erp.${serverId}-customer.test`, other: `other.${serverId}.test` };

  const routes = (extra: ProxyRoute[] = []): ProxyRoute[] => [
    { hostnames: [names.shop, names.custom], upstream: 'shop:8080', healthPath: '/health' },
    { hostnames: [names.other], upstream: 'other:8080', healthPath: '/health' },
    ...extra,
  ];
  const configOf = (routeList: ProxyRoute[], renewal: { interval: number; ratio: number } | null = null) => buildCaddyConfig({
    routes: routeList, publicHttpsPort: pebble.tlsPort, operatorCertificates: [],
    acme: {
      directoryUrl: pebble.directoryUrl, email: 'ops@example.org', caRootFile: CONTAINER_ACME_CA_ROOT, accountKeyPem,
      renewIntervalSeconds: renewal?.interval ?? null, renewalWindowRatio: renewal?.ratio ?? null,
    },
  });

  /** GET over HTTPS to the proxy's published port, with the TLS name and Host of `name`. */
  async function httpsGet(name: string, path = '/', host = name, dispatcher: Dispatcher = trusted) {
    const answer = await request(`https://${name}:${pebble.tlsPort}${path}`, {
      dispatcher, headers: { host: `${host}:${pebble.tlsPort}` }, signal: AbortSignal.timeout(10_000),
    });
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
  }

  async function httpGet(name: string, path = '/') {
    const answer = await request(`http://127.0.0.1:${pebble.httpPort}${path}`, { headers: { host: name }, signal: AbortSignal.timeout(10_000) });
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
  }

  /** The status line's code of a request over TLS named `servername` with another Host (undici would name the TLS connection after the Host). */
  async function statusWithHost(servername: string, host: string, ca: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: pebble.tlsPort, servername, ca, ALPNProtocols: ['http/1.1'] }, () => {
        socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
      });
      socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])));
      socket.on('error', reject);
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    });
  }

  /** The serial number of the certificate the proxy serves for `name`. */
  async function servedSerial(name: string, ca: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: pebble.tlsPort, servername: name, ca }, () => {
        resolve(socket.getPeerX509Certificate()!.serialNumber);
        socket.end();
      });
      socket.on('error', reject);
    });
  }

  async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      try {
        const value = await probe();
        if (value !== undefined) return value;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms${last ? ` (last: ${(last as Error).message})` : ''}`);
      await sleep(250);
    }
  }

  beforeAll(async () => {
    pebble = await startPebble();
    for (const name of Object.values(names)) await pebble.pointName(name, '127.0.0.1');
    admin = await ensureProxy(api, {
      serverId, httpPort: pebble.httpPort, httpsPort: pebble.tlsPort, bindAddress: '127.0.0.1', acmeCaRootPem: pebble.directoryCaPem,
    });
    await startBackend(api, 'shop');
    await startBackend(api, 'other');
    accountKeyPem = newAccountKeyPem();
    await registerAcmeAccount({ directoryUrl: pebble.hostDirectoryUrl, email: 'ops@example.org', caRootPem: pebble.directoryCaPem }, accountKeyPem);
    const root = await pebble.issuingRoot();
    trusted = new Agent({ connect: { ca: root, lookup: (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
      else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
    } } });
    await admin.load(configOf(routes()));
  }, 180_000);

  afterAll(async () => {
    await removeEverythingOf(api, serverId).catch(() => undefined);
    await api.json('DELETE', `/networks/${proxyNetworkName(serverId)}`, { accept: [404] }).catch(() => undefined);
    await trusted?.close();
    await pebble?.stop();
    await api.close();
  });

  it('serves a platform name and a custom domain over HTTPS with certificates the CA issued', async () => {
    // Within a Caddy retry (a minute after a failed first attempt), should the CA's first check fail.
    const shop = await waitFor('the platform name\'s certificate', 150_000, async () => {
      const answer = await httpsGet(names.shop, '/orders');
      return answer.status === 200 ? answer : undefined;
    });
    expect(shop.text).toBe('shop /orders\n');
    expect(shop.headers['strict-transport-security']).toBe('max-age=31536000');
    const custom = await waitFor('the custom domain\'s certificate', 150_000, async () => {
      const answer = await httpsGet(names.custom);
      return answer.status === 200 ? answer : undefined;
    });
    expect(custom.text).toBe('shop /\n');
    const stored = await readStoredCertificates(api, proxyContainerName(serverId));
    expect(stored.get(names.shop)?.expiresAt).toMatch(/^\d{4}-/);
    expect(new Date(stored.get(names.custom)!.expiresAt).getTime()).toBeGreaterThan(Date.now());
  }, 320_000);

  it('redirects HTTP to HTTPS on the published port, and answers 404 over HTTP for a name it does not serve', async () => {
    const redirected = await httpGet(names.shop, '/a?b=1');
    expect(redirected.status).toBe(308);
    expect(redirected.headers.location).toBe(`https://${names.shop}:${pebble.tlsPort}/a?b=1`);
    expect((await httpGet(`nobody.${serverId}.test`)).status).toBe(404);
  });

  it('answers 421 for a Host that is not the TLS name, or no service of the server', async () => {
    await waitFor('the other service\'s certificate', 60_000, async () => ((await httpsGet(names.other)).status === 200 ? true : undefined));
    const root = await pebble.issuingRoot();
    expect(await statusWithHost(names.shop, names.shop, root)).toBe(200);
    expect(await statusWithHost(names.shop, names.other, root)).toBe(421);
    expect(await statusWithHost(names.shop, `nobody.${serverId}.test`, root)).toBe(421);
    // A TLS name the server has no certificate for: the handshake fails, nothing is served.
    await expect(httpsGet(`nobody.${serverId}.test`)).rejects.toThrow();
  }, 90_000);

  it('lets requests in flight finish, and fails none, while its configuration changes', async () => {
    await waitFor('the certificate', 60_000, async () => ((await httpsGet(names.shop)).status === 200 ? true : undefined));
    const slow = httpsGet(names.shop, '/slow');
    let stop = false;
    const failures: string[] = [];
    let sent = 0;
    let resent = 0;
    // A client as browsers are: a keep-alive connection the proxy closes while idle (as a new
    // configuration takes over, Caddy closes the old one's idle connections) gets the request
    // again on a new connection, which RFC 9112 (9.3.1) allows for a request that got no answer.
    // Only that: a status, 5xx included, is an answer and counts.
    const browserLike = new RetryAgent(trusted, {
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
    const steady = (async () => {
      while (!stop) {
        sent++;
        const answer = await httpsGet(names.other, '/steady', names.other, browserLike).catch((error: Error) => ({ status: 0, text: error.message }));
        if (answer.status !== 200) failures.push(`${answer.status} ${answer.text}`);
      }
    })();
    for (let change = 0; change < 5; change++) {
      await admin.load(configOf(routes([{ hostnames: [`extra${change}.${serverId}.test`], upstream: 'other:8080', healthPath: '/' }])));
      await sleep(200);
    }
    stop = true;
    await steady;
    expect(await slow).toMatchObject({ status: 200, text: 'shop /slow\n' });
    expect(sent).toBeGreaterThan(5);
    expect(failures).toEqual([]);
    expect(resent).toBeLessThan(sent / 5);
    await admin.load(configOf(routes()));
  }, 90_000);

  it('cannot be configured from inside a service container', async () => {
    // The admin socket is in the proxy's own file system; on the network it listens nowhere but 80 and 443.
    const probe = await api.json<{ Id: string }>('POST', `/containers/teaminfra-${serverId}-shop/exec`, {
      body: { AttachStdout: true, AttachStderr: true, Cmd: ['sh', '-c',
        `socat -T 3 - TCP:${proxyContainerName(serverId)}:2019 </dev/null; echo "admin:$?"; ` +
        `printf 'GET / HTTP/1.0\\r\\nHost: ${names.shop}\\r\\n\\r\\n' | socat -T 3 - TCP:${proxyContainerName(serverId)}:80 | head -1; ` +
        'ls /run/teaminfra-proxy/admin.sock 2>&1 | head -1'] },
    });
    const output = await api.stream('POST', `/exec/${probe.Id}/start`, { body: { Detach: false, Tty: false } });
    let text = '';
    for await (const chunk of output) text += (chunk as Buffer).toString('utf8');
    expect(text).toMatch(/admin:1/);
    expect(text).toContain('308');
    expect(text).toMatch(/No such file/);
  }, 30_000);

  it('reports a name that does not resolve as failed with a reason and an event, and issues it once it resolves', async () => {
    const late = `late.${serverId}.test`;
    const dataDir = tempDataDir();
    const db = openDatabase(dataDir);
    try {
      // The team's side: a service on this server with the name, as add_service_domain leaves it.
      const teamId = await insertTeam(db.kysely, { name: 'Proxy team', plan: 'starter', timezone: 'UTC' });
      const dbServerId = await insertServer(db.kysely, { teamId, name: 'docker' });
      const serviceId = await insertService(db.kysely, { teamId, serverId: dbServerId, name: 'Late' });
      await db.kysely.insertInto('docker_servers').values({ server_id: dbServerId, docker_host: 'unix:///var/run/docker.sock', image: null, created_at: nowIso(), base_domain: `apps.${serverId}.test` }).execute();
      await pebble.pointName(`apps.${serverId}.test`, '127.0.0.1');
      await addServiceDomain(db.kysely, serviceId, late);
      const resolver = resolverFromEnv({ TEAMINFRA_DNS_SERVER: pebble.dnsServer });
      const look = (sinceMs: number) => watchCertificates(db.kysely, api, proxyContainerName(serverId), dbServerId, { sinceMs, resolver });
      const since = Date.now();
      await admin.load(configOf(routes([{ hostnames: [late], upstream: 'other:8080', healthPath: '/' }])));
      const failed = await waitFor('a failure', 60_000, async () => {
        await look(since);
        return (await listServiceDomains(db.kysely, serviceId)).find((entry) => entry.certificate.state === 'failed');
      });
      expect(failed.certificate.reason).toBe('The name does not resolve: give it an A or AAAA record pointing at this server (127.0.0.1).');
      await pebble.pointName(late, '127.0.0.1');
      // Caddy tries again on its own, a minute after the first failure, then less and less often.
      const answer = await waitFor('the certificate once the name resolves', 150_000, async () => {
        const got = await httpsGet(late, '/now');
        return got.status === 200 ? got : undefined;
      });
      expect(answer.text).toBe('other /now\n');
      await waitFor('the issued state', 30_000, async () => {
        await look(since);
        return (await listServiceDomains(db.kysely, serviceId))[0]?.certificate.state === 'issued' ? true : undefined;
      });
      const events = await listEvents(db.kysely, teamId);
      expect(events.map((event) => event.type)).toEqual(['certificate.failed', 'certificate.issued']);
    } finally {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('serves a renewed certificate without a restart', async () => {
    const root = await pebble.issuingRoot();
    await waitFor('the certificate', 60_000, async () => ((await httpsGet(names.other)).status === 200 ? true : undefined));
    const before = await servedSerial(names.other, root);
    const startedAt = (await api.json<{ State: { StartedAt: string } }>('GET', `/containers/${proxyContainerName(serverId)}/json`)).State.StartedAt;
    // Due at once: Pebble's certificates last years, so the renewal window is nearly all of it.
    await admin.load(configOf(routes(), { interval: 2, ratio: 0.9999999 }));
    await waitFor('a renewed certificate served', 90_000, async () => ((await servedSerial(names.other, root)) !== before ? true : undefined));
    await admin.load(configOf(routes()));
    expect((await httpsGet(names.other)).status).toBe(200);
    const after = (await api.json<{ State: { StartedAt: string } }>('GET', `/containers/${proxyContainerName(serverId)}/json`)).State.StartedAt;
    expect(after).toBe(startedAt);
  }, 150_000);

  it('serves every name again after its container restarts', async () => {
    await api.json('POST', `/containers/${proxyContainerName(serverId)}/restart`, { query: { t: 5 }, timeoutMs: 60_000 });
    await waitFor('the platform name after the restart', 30_000, async () => ((await httpsGet(names.shop)).status === 200 ? true : undefined));
    expect((await httpsGet(names.custom)).text).toBe('shop /\n');
  }, 60_000);
});
