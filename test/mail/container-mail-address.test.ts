// Where a Docker server's copies reach the mail catcher, with a newcomer's settings (no
// TEAMINFRA_SMTP_*: the catcher on loopback): on this machine's engine, the catcher also listens
// on the engine's bridge gateway and the copy is told it, so a copy of the bundled demo image
// keeps its email; where containers cannot reach it, the copy is refused with what to set.
// Against real SMTP listeners, a stand-in engine for the answers a real one here cannot give,
// and the real engine for the copy.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerApi } from '../../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../../src/engine/docker/engine-address.js';
import { DriverError } from '../../src/engine/driver.js';
import { ContainerMailAddress } from '../../src/mail/container-mail-address.js';
import { MailCatcher } from '../../src/mail/mail-catcher.js';
import { mailConfigFromEnv } from '../../src/mail/mail-config.js';
import { startTestServer, type TestServer } from '../support/fixtures.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from '../engine/docker/support/docker-engine.js';
import { startDockerTeam } from '../engine/docker/support/docker-team.js';
import { engineObjectsOf, teamCalls } from '../engine/docker/support/team-calls.js';

/** A newcomer's mail settings; only the port is the suite's own, so that suites run side by side. */
const DEFAULT_MAIL = { ...mailConfigFromEnv({}), port: 0 };

/** A stand-in engine on a unix socket (as this machine's engine is) whose default bridge network is `bridge` (undefined: none). */
async function standInEngine(bridge: object | undefined): Promise<{ host: string; server: HttpServer }> {
  const server = createHttpServer((req, res) => {
    const found = /\/networks\/bridge$/.test(req.url ?? '') && bridge !== undefined;
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(found ? bridge : { message: 'network bridge not found' }));
  });
  const socket = join(mkdtempSync(join(tmpdir(), 'teaminfra-engine-')), 'docker.sock');
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return { host: `unix://${socket}`, server };
}

const engineAt = (host: string) => {
  const address = parseEngineAddress(host);
  return { address, api: new DockerApi(address) };
};

async function refusalOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(DriverError);
  return (error as DriverError).reason;
}

describe('ContainerMailAddress', () => {
  let server: TestServer;
  let catcher: MailCatcher;
  beforeAll(async () => {
    server = await startTestServer();
    catcher = new MailCatcher(server.app.db.kysely, DEFAULT_MAIL);
    await catcher.start();
  });
  afterAll(async () => {
    await catcher?.stop();
    await server?.close();
  });

  it('refuses an engine on another machine while the catcher listens on loopback, saying what to set', async () => {
    const reason = await refusalOf(new ContainerMailAddress(catcher, { host: '127.0.0.1', addressForContainers: undefined })
      .of(engineAt('tcp://203.0.113.5:2375')));
    expect(reason).toBe(`A copy's email would be lost: this server's mail catcher (127.0.0.1:${catcher.port}) cannot be reached from the Docker ` +
      'engine\'s containers, because the engine at tcp://203.0.113.5:2375 runs on another machine. No copy is made or started on that engine ' +
      'until it can: set TEAMINFRA_SMTP_HOST to an address of this machine that the engine\'s containers reach (or ' +
      'TEAMINFRA_SMTP_ADDRESS_FOR_CONTAINERS to the host:port they reach the catcher at), then restart teaminfra serve.');
    expect(catcher.addresses).toEqual([`127.0.0.1:${catcher.port}`]);
  });

  it('refuses an engine whose bridge gateway is not an address of this machine (Docker Desktop, rootless), or that has no bridge', async () => {
    const elsewhere = await standInEngine({ Name: 'bridge', IPAM: { Config: [{ Subnet: '198.51.100.0/24', Gateway: '198.51.100.1' }] } });
    const none = await standInEngine(undefined);
    try {
      const address = new ContainerMailAddress(catcher, { host: '127.0.0.1', addressForContainers: undefined });
      expect(await refusalOf(address.of(engineAt(elsewhere.host)))).toContain(
        'because the catcher cannot listen on 198.51.100.1, the gateway of its bridge network, which is not an address of this machine (EADDRNOTAVAIL;');
      expect(await refusalOf(address.of(engineAt(none.host)))).toContain(`because the engine at ${none.host} has no default bridge network with an IPv4 gateway.`);
      expect(catcher.addresses).toEqual([`127.0.0.1:${catcher.port}`]);
    } finally {
      elsewhere.server.close();
      none.server.close();
    }
  });

  it('tells every engine the address the operator set, and nothing while the catcher does not listen', async () => {
    const remote = engineAt('tcp://203.0.113.5:2375');
    const local = engineAt('unix:///var/run/nowhere.sock');
    expect(await new ContainerMailAddress(catcher, { host: '127.0.0.1', addressForContainers: 'mail.hosts.example:2525' }).of(remote))
      .toBe('mail.hosts.example:2525');
    expect(await new ContainerMailAddress(catcher, { host: '192.0.2.2', addressForContainers: undefined }).of(remote)).toBe(`192.0.2.2:${catcher.port}`);
    expect(await new ContainerMailAddress(catcher, { host: '0.0.0.0', addressForContainers: undefined }).of(local)).toBe(`host.docker.internal:${catcher.port}`);
    expect(await refusalOf(new ContainerMailAddress(catcher, { host: '0.0.0.0', addressForContainers: undefined }).of(remote))).toContain('runs on another machine');
    const stopped = new MailCatcher(server.app.db.kysely, DEFAULT_MAIL);
    expect(await new ContainerMailAddress(stopped, { host: '127.0.0.1', addressForContainers: undefined }).of(remote)).toBeNull();
  });
});

describe.runIf(dockerAvailable)('copies of a demo-image service on this machine\'s engine, with the default mail settings', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let copyId: string;
  /** The engine's bridge gateway, as the catcher finds it. */
  let gateway: string;
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);
  const emailsOf = async (id: string) => (await call('GET', `/api/service-erp/${id}/emails`)).body.data as { subject: string }[];
  const askReset = async (id: string) => {
    const { url } = (await call('GET', `/api/service-erp/${id}`)).body;
    expect((await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) })).status).toBe(200);
  };

  beforeAll(async () => {
    const docker = await startDockerTeam({ mail: DEFAULT_MAIL });
    ({ server, token } = docker);
    await server.app.mailCatcher.start();
    serverId = await docker.addServer('mail-defaults');
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: serverId, name: 'Shop' });
    expect(created).toMatchObject({ state: 'succeeded' });
    serviceId = created.service_id;
    // Found as the product finds it, by a catcher of its own that is gone again.
    const probe = new MailCatcher(server.app.db.kysely, DEFAULT_MAIL);
    await probe.start();
    gateway = (await new ContainerMailAddress(probe, { host: '127.0.0.1', addressForContainers: undefined }).of(engineAt(TEST_DOCKER_HOST)))!.split(':')[0]!;
    await probe.stop();
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('refuses to make a copy while another program holds the catcher\'s port on the bridge gateway, and makes nothing', async () => {
    const blocker: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(server.app.mailCatcher.port, gateway, resolve));
    try {
      const refused = await actAndWait('POST', `/api/service-erp/${serviceId}/copies`, 120_000, { name: 'Refused' });
      expect(refused.state).toBe('failed');
      expect(refused.reason).toContain(`another program holds port ${server.app.mailCatcher.port} on ${gateway}, the gateway of its bridge network`);
      expect(refused.reason).toContain('set TEAMINFRA_SMTP_PORT to a port free on that address');
      expect(await engineObjectsOf(api, refused.service_id)).toEqual({ containers: [], volumes: [], networks: [] });
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 150_000);

  it('keeps the password-reset email of a copy, sent from its container to the catcher on the engine\'s bridge gateway', async () => {
    const copied = await actAndWait('POST', `/api/service-erp/${serviceId}/copies`, 120_000, { name: 'Staging' });
    expect(copied, JSON.stringify(copied)).toMatchObject({ state: 'succeeded' });
    copyId = copied.service_id;
    expect(await actAndWait('POST', `/api/service-erp/${copyId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    await askReset(copyId);
    expect((await emailsOf(copyId)).map((email) => email.subject)).toEqual(['Reset your password for Staging']);
    // Loopback and the gateway, nowhere else; the copy's container was told the gateway.
    const { port } = server.app.mailCatcher;
    expect(server.app.mailCatcher.addresses).toEqual([`127.0.0.1:${port}`, `${gateway}:${port}`]);
    const [container] = await api.json<{ Id: string }[]>('GET', '/containers/json', {
      query: { filters: JSON.stringify({ label: [`io.teaminfra.service-id=${copyId}`, 'io.teaminfra.role=service'] }) },
    });
    const env = (await api.json<{ Config: { Env: string[] } }>('GET', `/containers/${container!.Id}/json`)).Config.Env;
    expect(env).toContain(`TEAMINFRA_SMTP_HOST=${gateway}`);
  }, 300_000);

  it('listens on the gateway again after a restart of the catcher, for the copy that kept running', async () => {
    const { port } = server.app.mailCatcher;
    await server.app.mailCatcher.stop();
    // As the next `serve` does: the same port, and the addresses its running copies were told.
    const restarted = new MailCatcher(server.app.db.kysely, { ...DEFAULT_MAIL, port });
    await restarted.start();
    try {
      expect(await new ContainerMailAddress(restarted, { host: '127.0.0.1', addressForContainers: undefined }).listenForCopies(server.app.db.kysely)).toEqual([]);
      expect(restarted.addresses).toEqual([`127.0.0.1:${port}`, `${gateway}:${port}`]);
      await askReset(copyId);
      expect(await emailsOf(copyId)).toHaveLength(2);
    } finally {
      await restarted.stop();
    }
  }, 120_000);
});
