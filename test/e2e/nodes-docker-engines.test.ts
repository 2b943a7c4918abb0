// Two machines' worth of hosting from one control plane: two Docker engines (this machine's,
// and a second dockerd with its own socket and data standing in for another machine) and two
// `teaminfra serve` nodes on one PostgreSQL. Services on both engines are listed together and
// operated through either node; a backup, and a caught email, made through one node download
// through the other, over REST and by an MCP download link, since neither lives on a node.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp } from '../mcp/clients.js';
import { act, fetchText, send } from '../engine/support/engine-http.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from '../engine/docker/support/docker-engine.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from '../engine/docker/support/second-engine.js';
import { twoNodes, type NodeName, type TwoNodes } from './support/two-nodes.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.runIf(dockerAvailable && secondEngineStartable)('two serve nodes on PostgreSQL operating two Docker engines', () => {
  const firstEngine = testDockerApi();
  let secondEngine: SecondEngine;
  let nodes: TwoNodes;
  let token: string;
  const servers: Record<'first' | 'second', string> = { first: '', second: '' };
  const services: Record<'first' | 'second', string> = { first: '', second: '' };

  const download = async (node: NodeName, path: string) => {
    const response = await fetch(`${nodes.url(node)}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  };
  /** An MCP download link made through `madeOn`, fetched from `fetchedFrom` (same path, the other node's address). */
  const linkAcrossNodes = async (madeOn: NodeName, fetchedFrom: NodeName, tool: string, args: Record<string, string>) => {
    const { client, close } = await connectHttp(nodes.url(madeOn), token);
    try {
      const result = await client.callTool({ name: tool, arguments: args });
      const link = new URL((result.structuredContent as { download_url: string }).download_url);
      expect(link.origin).toBe(nodes.url(madeOn));
      const response = await fetch(`${nodes.url(fetchedFrom)}${link.pathname}`);
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
    } finally {
      await close();
    }
  };
  /** Backups cached by the nodes (either may have taken the backup): removed, so a download must fetch from the engine. */
  const forgetCachedBackups = (serviceId: string) => {
    for (const node of ['A', 'B'] as const) rmSync(join(nodes.dataDirs[node], 'backups', serviceId), { recursive: true, force: true });
  };

  beforeAll(async () => {
    secondEngine = await startSecondEngine();
    nodes = await twoNodes('docker_engines');
    const teamId = (await nodes.admin(['create-team', '--name', 'Two engines'])).id;
    token = (await nodes.admin(['create-token', '--team', teamId, '--name', 'ops', '--full-access'])).token;
    for (const [which, host] of [['first', TEST_DOCKER_HOST], ['second', secondEngine.host]] as const) {
      const { image } = await nodes.admin(['build-erp-image', '--docker-host', host]);
      servers[which] = (await nodes.admin(['create-server', '--team', teamId, '--name', `${which} engine`, '--docker-host', host, '--image', image])).id;
    }
    // The mail catcher listens where containers reach it (their bridge's gateway).
    const env = { TEAMINFRA_SMTP_HOST: '0.0.0.0', TEAMINFRA_START_TIMEOUT_MS: '20000' };
    await Promise.all([nodes.start('A', env), nodes.start('B', env)]);
  }, 300_000);
  afterAll(async () => {
    await nodes?.close();
    if (servers.first) await removeEverythingOf(firstEngine, servers.first);
    if (servers.second && secondEngine) await removeEverythingOf(secondEngine.api, servers.second);
    await firstEngine.close();
    await secondEngine?.stop();
  }, 120_000);

  it('creates a service on each engine, through each node, and lists both through either node', async () => {
    const onFirst = await act(nodes.url('A'), token, 'POST', '/api/service-erp', { server_id: servers.first, name: 'Shop on the first engine' });
    const onSecond = await act(nodes.url('B'), token, 'POST', '/api/service-erp', { server_id: servers.second, name: 'Shop on the second engine' });
    expect([onFirst.state, onSecond.state]).toEqual(['succeeded', 'succeeded']);
    services.first = onFirst.service_id;
    services.second = onSecond.service_id;
    for (const node of ['A', 'B'] as const) {
      const listed = (await send(nodes.url(node), 'GET', '/api/service-erp', token)).body.data as { id: string; server_id: string }[];
      expect(listed.map((service) => [service.id, service.server_id]).sort()).toEqual(
        [[services.first, servers.first], [services.second, servers.second]].sort());
    }
  });

  it('starts and stops each service through either node, its one container on its own engine', async () => {
    for (const [which, startedBy, stoppedBy] of [['first', 'B', 'A'], ['second', 'A', 'B']] as const) {
      const serviceId = services[which];
      expect(await act(nodes.url(startedBy), token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
      const running = (await send(nodes.url(stoppedBy), 'GET', `/api/service-erp/${serviceId}`, token)).body;
      expect(running.state).toBe('running');
      expect((await fetchText(running.url)).text).toContain(`<h1>Shop on the ${which} engine</h1>`);
      const engine = which === 'first' ? firstEngine : secondEngine.api;
      const other = which === 'first' ? secondEngine.api : firstEngine;
      expect((await containersOfServer(engine, servers[which], 'service')).map((container) => container.State)).toEqual(['running']);
      expect(await containersOfServer(other, servers[which])).toEqual([]);
      expect(await act(nodes.url(stoppedBy), token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
      expect((await send(nodes.url(startedBy), 'GET', `/api/service-erp/${serviceId}`, token)).body).toMatchObject({ state: 'stopped', url: null });
    }
  });

  it('downloads a backup made through one node through the other, over REST and by an MCP link made on the first', async () => {
    for (const [which, backedUpBy, readBy] of [['first', 'A', 'B'], ['second', 'B', 'A']] as const) {
      const done = await act(nodes.url(backedUpBy), token, 'POST', `/api/service-erp/${services[which]}/backups`);
      expect(done.state).toBe('succeeded');
      const backup = (await send(nodes.url(readBy), 'GET', `/api/backups/${done.backup_id}`, token)).body;
      forgetCachedBackups(services[which]);
      const viaRest = await download(readBy, `/api/backups/${done.backup_id}/download`);
      expect(viaRest.status).toBe(200);
      expect(sha256(viaRest.bytes)).toBe(backup.sha256);
      forgetCachedBackups(services[which]);
      const viaLink = await linkAcrossNodes(backedUpBy, readBy, 'download_backup', { backup_id: done.backup_id });
      expect(viaLink.status).toBe(200);
      expect(sha256(viaLink.bytes)).toBe(backup.sha256);
    }
  });

  it('downloads an email caught through one node\'s mail catcher through either node, over REST and by an MCP link', async () => {
    const copied = await act(nodes.url('A'), token, 'POST', `/api/service-erp/${services.first}/copies`, { name: 'Staging' });
    expect(copied.state).toBe('succeeded');
    const copyId = copied.service_id as string;
    expect(await act(nodes.url('A'), token, 'POST', `/api/service-erp/${copyId}/start`)).toMatchObject({ state: 'succeeded' });
    const { url } = (await send(nodes.url('A'), 'GET', `/api/service-erp/${copyId}`, token)).body;
    // The copy mails the catcher of the node whose worker started it.
    expect((await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) })).status).toBe(200);
    const emails = (await send(nodes.url('B'), 'GET', `/api/service-erp/${copyId}/emails`, token)).body.data as { id: string; subject: string }[];
    expect(emails.map((email) => email.subject)).toEqual(['Reset your password for Staging']);
    const emailId = emails[0]?.id as string;
    const raws = await Promise.all((['A', 'B'] as const).map((node) => download(node, `/api/emails/${emailId}/raw`)));
    for (const raw of raws) {
      expect(raw.status).toBe(200);
      expect(raw.bytes.toString('utf8')).toContain('Subject: Reset your password for Staging');
    }
    expect(raws[0]?.bytes.equals(raws[1]?.bytes as Buffer)).toBe(true);
    for (const [madeOn, fetchedFrom] of [['A', 'B'], ['B', 'A']] as const) {
      const viaLink = await linkAcrossNodes(madeOn, fetchedFrom, 'download_caught_email', { email_id: emailId });
      expect(viaLink.status).toBe(200);
      expect(viaLink.bytes.equals(raws[0]?.bytes as Buffer)).toBe(true);
    }
  });
});
