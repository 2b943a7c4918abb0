// A production service's outgoing relay where the service really connects, through the real
// server, the local driver and real SMTP listeners: the relay's name is resolved and checked
// again at each start, and the service is pinned to the address checked then. A name that now
// resolves to a private address (DNS rebinding after set_outgoing_mail passed) is refused; a
// name that changes after the start changes nothing. Names resolve through an injected lookup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOutgoingRelay } from '../../src/mail/outgoing-relay.js';
import type { AddressLookup } from '../../src/mail/relay-address.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, testDockerApi } from './docker/support/docker-engine.js';
import { startDockerTeam } from './docker/support/docker-team.js';
import { act, send } from './support/engine-http.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';

const RELAY = 'relay.rebinding.test';

describe('a production service\'s outgoing relay at its start', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let first: SmtpSink;
  let second: SmtpSink;
  /** What the relay's name resolves to now. */
  let answer = '93.184.216.34';
  const lookup: AddressLookup = async () => [{ address: answer, family: 4 }];

  const setRelay = (serviceId: string, allowPrivate: boolean) => setOutgoingRelay(server.app.db.kysely, server.app.secrets,
    { id: serviceId, parent_id: null }, { host: RELAY, port: first.port }, { allowPrivate, lookup });
  const askReset = async (serviceId: string) => {
    const { body } = await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token);
    const response = await fetch(new URL('web/reset_password', body.url), { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(response.status).toBe(200);
  };

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0, outgoingRelay: { allowPrivate: false, lookup } } }, {}, { engine: true });
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    // Two listeners at the same port: where the name led at the start, and where it leads after.
    first = await startSmtpSink({ host: '127.0.0.1' });
    second = await startSmtpSink({ host: '127.0.0.2', port: first.port });
  });
  afterAll(async () => {
    for (const serviceId of team?.serviceIds ?? []) await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`).catch(() => undefined);
    await first?.close();
    await second?.close();
    await server?.close();
  });

  it('refuses to start a service whose relay name now resolves to a loopback address, and no mail reaches the listener there', async () => {
    // Set while the name led to a public address, as set_outgoing_mail checks it.
    answer = '93.184.216.34';
    await setRelay(team.serviceIds[0], false);
    answer = '127.0.0.1';
    const started = await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.serviceIds[0]}/start`);
    expect(started.state).toBe('failed');
    expect(started.reason).toContain(`The relay host ${RELAY} resolves to a private, loopback or link-local address, which is not allowed; the operator can allow it.`);
    expect(started.reason).toContain('set another one with set_outgoing_mail, or none');
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${team.serviceIds[0]}`, token)).body.state).not.toBe('running');
    expect(first.messages).toEqual([]);
  });

  it('sends every email to the address checked at the start, wherever the name leads afterwards', async () => {
    // The operator allows this relay on loopback; its name is still resolved once, at the start.
    answer = '127.0.0.1';
    await setRelay(team.serviceIds[1], true);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.serviceIds[1]}/start`)).toMatchObject({ state: 'succeeded' });
    await askReset(team.serviceIds[1]);
    answer = '127.0.0.2';
    await askReset(team.serviceIds[1]);
    expect(first.messages.map((message) => message.to)).toEqual([['admin@example.com'], ['admin@example.com']]);
    expect(second.messages).toEqual([]);
  });
});

describe.runIf(dockerAvailable)('a production service\'s outgoing relay at its start, on a Docker server', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let sink: SmtpSink;
  /** The engine's bridge gateway: where a container reaches this machine, and the relay's name leads. */
  let gateway: string;
  let answer = '93.184.216.34';
  const lookup: AddressLookup = async () => [{ address: answer, family: 4 }];
  const container = async () => {
    const [running] = (await containersOfServer(api, serverId, 'service')).filter((each) => each.State === 'running');
    return api.json<{ NetworkSettings: { Networks: Record<string, { Gateway: string }> }; Config: { Env: string[] }; HostConfig: { ExtraHosts: string[] } }>(
      'GET', `/containers/${running!.Id}/json`);
  };
  const restart = async () => {
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
    return act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
  };

  beforeAll(async () => {
    const docker = await startDockerTeam({ engine: { outgoingRelay: { allowPrivate: false, lookup } } });
    ({ server, token } = docker);
    serverId = await docker.addServer('relay-pins');
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Shop' });
    serviceId = created.service_id;
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
    // The gateway of the service's own network (its containers join no other).
    gateway = Object.values((await container()).NetworkSettings.Networks)[0]!.Gateway;
    sink = await startSmtpSink({ host: gateway });
  }, 300_000);
  afterAll(async () => {
    await sink?.close();
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('gives the container the relay\'s name, pinned in its /etc/hosts to the address checked at the start, where its email goes', async () => {
    // The operator allows this relay on the hosts' own network; its name is only known to the lookup.
    answer = gateway;
    await setOutgoingRelay(server.app.db.kysely, server.app.secrets, { id: serviceId, parent_id: null }, { host: RELAY, port: sink.port }, { allowPrivate: true, lookup });
    expect(await restart()).toMatchObject({ state: 'succeeded' });
    const made = await container();
    expect(made.Config.Env).toContain(`TEAMINFRA_SMTP_HOST=${RELAY}`);
    expect(made.HostConfig.ExtraHosts).toContain(`${RELAY}:${gateway}`);
    const { url } = (await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect((await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) })).status).toBe(200);
    expect(sink.messages.map((message) => message.to)).toEqual([['admin@example.com']]);
  }, 180_000);

  it('refuses the start when the name now leads to a private address the operator did not allow, and the service does not run', async () => {
    answer = '93.184.216.34';
    await setOutgoingRelay(server.app.db.kysely, server.app.secrets, { id: serviceId, parent_id: null }, { host: RELAY, port: sink.port }, { allowPrivate: false, lookup });
    answer = gateway;
    const refused = await restart();
    expect(refused.state).toBe('failed');
    expect(refused.reason).toContain(`The relay host ${RELAY} resolves to a private, loopback or link-local address, which is not allowed`);
    expect((await containersOfServer(api, serverId, 'service')).filter((each) => each.State === 'running')).toEqual([]);
  }, 180_000);
});
