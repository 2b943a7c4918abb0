// A team's ERP services on a Docker server, over REST, against a real Docker engine: each is a
// container of the bundled image (built offline by `teaminfra admin build-erp-image`), its data
// in a labelled volume, reached at its published port; copies mail the catcher from their
// container; backups are tars of the data kept on the engine; restores swap volumes.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { extract } from 'tar-stream';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decompress as zstdDecompress } from 'zstd-napi';
import { newId } from '../../../src/db/ids.js';
import { decompressedFile } from '../../../src/engine/backup-compression.js';
import { getJson, insertCompletedBackup, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../support/fixtures.js';
import { admin, runCli } from '../../support/cli.js';
import { DEFAULT_RETENTION, pruneBackups } from '../../../src/engine/backup-retention.js';
import { singleFileTar } from '../../../src/engine/docker/archives.js';
import { backupsMount } from '../../../src/engine/docker/backup-store.js';
import { createHelper } from '../../../src/engine/docker/containers.js';
import { DockerError } from '../../../src/engine/docker/docker-api.js';
import { EngineRegistry } from '../../../src/engine/docker/engine-registry.js';
import { findDockerOrphans } from '../../../src/engine/docker/orphans.js';
import { readDockerState } from '../../../src/engine/docker/docker-state.js';
import { copyForCredentials } from '../../../src/mail/mail-credentials.js';
import { isSealed } from '../../../src/secrets/secret-box.js';
import { act, fetchText, portOf, send, tryConnect } from '../support/engine-http.js';
import { derivedImage } from './support/docker-team.js';
import { expectGone, nodeCopyOf } from './support/node-backup-copies.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi, volumesOfServer } from './support/docker-engine.js';

/** The files of a backup (a zstd-compressed tar), by name. */
async function filesOf(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const reader = extract();
  reader.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk) => chunks.push(chunk as Buffer));
    stream.on('end', () => {
      if (header.type === 'file') files.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  await new Promise<void>((resolve, reject) => {
    reader.on('finish', resolve).on('error', reject);
    Readable.from(zstdDecompress(archive)).pipe(reader as unknown as NodeJS.WritableStream);
  });
  return files;
}

function outgoingMailRows(database: Buffer): number {
  const file = join(mkdtempSync(join(tmpdir(), 'teaminfra-backup-')), 'erp.sqlite');
  writeFileSync(file, database);
  const db = new SQLite(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS count FROM outgoing_mail').get() as { count: number }).count;
  } finally {
    db.close();
  }
}

describe.runIf(dockerAvailable)('ERP services on a Docker server', () => {
  const api = testDockerApi();
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let serverId: string;
  let serviceId: string;
  /** The running copy of serviceId (the mail catcher test makes it). */
  let stagingId = '';
  let image: string;

  const service = async (id: string) => (await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body;
  const download = async (backupId: string) => {
    const response = await fetch(`${server.baseUrl}/api/backups/${backupId}/download`, { headers: { Authorization: `Bearer ${token}` } });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
  };
  const backupNow = async (id: string) => {
    const done = await act(server.baseUrl, token, 'POST', `/api/service-erp/${id}/backups`);
    expect(done).toMatchObject({ state: 'succeeded' });
    return done.backup_id as string;
  };

  /** Whether the engine's backups volume still holds the file of a backup kept there (docker://...). */
  const keptOnEngine = async (path: string): Promise<boolean> => {
    const name = decodeURIComponent(new URL(path).pathname.slice(1));
    const helper = await createHelper(api, { image, serviceId, serverId, mounts: [backupsMount(serverId)] });
    try {
      const tar = await api.stream('GET', `/containers/${helper.id}/archive`, { query: { path: `${backupsMount(serverId).at}/${name}` } });
      tar.destroy();
      return true;
    } catch (error) {
      if (error instanceof DockerError && error.status === 404) return false;
      throw error;
    } finally {
      await helper.remove();
    }
  };

  beforeAll(async () => {
    server = await startTestServer({
      engine: { pollMs: 100, reconcileIntervalMs: 0, startTimeoutMs: 20_000 },
      mail: { host: '0.0.0.0', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 },
    }, {}, { engine: true });
    await server.app.mailCatcher.start();
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    image = (await admin(server.dataDir, ['build-erp-image', '--docker-host', TEST_DOCKER_HOST])).image;
    serverId = (await admin(server.dataDir, ['create-server', '--team', team.teamId, '--name', 'docker-1', '--docker-host', TEST_DOCKER_HOST, '--image', image])).id;
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    // Made by the engine without our labels when the backups volume was lost (so unseen by removeEverythingOf).
    if (serverId) await api.json('DELETE', `/volumes/teaminfra-backups-${serverId}`, { accept: [404] });
    await api.close();
  });

  it('admin build-erp-image prints the image, which carries the image contract as labels', async () => {
    expect(image).toMatch(/^teaminfra-erp:\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    const inspected = await api.json<{ Config: { Labels: Record<string, string> } }>('GET', `/images/${encodeURIComponent(image)}/json`);
    expect(inspected.Config.Labels).toMatchObject({ 'io.teaminfra.port': '8080', 'io.teaminfra.data-dir': '/data', 'io.teaminfra.health-path': '/health' });
  });

  it('admin create-server refuses an engine that does not answer and an image that does not exist, naming what to do', async () => {
    const absent = await runCli(['admin', 'create-server', '--team', team.teamId, '--name', 'x', '--docker-host', 'unix:///nonexistent/docker.sock', '--data-dir', server.dataDir]);
    expect(absent.code).toBe(2);
    expect(absent.stderr).toContain('does not answer (its socket does not exist)');
    const noImage = await runCli(['admin', 'create-server', '--team', team.teamId, '--name', 'x', '--docker-host', TEST_DOCKER_HOST, '--image', 'teaminfra-no-such-image:1', '--data-dir', server.dataDir]);
    expect(noImage.code).toBe(2);
    expect(noImage.stderr).toContain('the image "teaminfra-no-such-image:1" does not exist on the Docker engine');
    const badAddress = await runCli(['admin', 'create-server', '--team', team.teamId, '--name', 'x', '--docker-host', 'http://example', '--data-dir', server.dataDir]);
    expect(badAddress.code).toBe(2);
    expect(badAddress.stderr).toContain('is not a Docker engine address');
    const servers = await getJson(server.baseUrl, '/api/servers', token);
    expect(servers.body.data.map((item: { name: string }) => item.name)).not.toContain('x');
  });

  it('POST /api/service-erp on a Docker server provisions a labelled volume whose data can be backed up at once', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Shop' });
    expect(created).toMatchObject({ state: 'succeeded' });
    serviceId = created.service_id;
    const volumes = await volumesOfServer(api, serverId);
    expect(volumes.find((volume) => volume.Labels['io.teaminfra.service-id'] === serviceId)).toMatchObject({ Name: `teaminfra-data-${serviceId}` });
    const backupId = await backupNow(serviceId);
    const files = await filesOf((await download(backupId)).bytes);
    expect(outgoingMailRows(files.get('erp.sqlite') as Buffer)).toBe(0);
  });

  it('start runs one labelled container that serves the home page at its url; stop makes the port refuse', async () => {
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
    const running = await service(serviceId);
    expect(running).toMatchObject({ state: 'running', revision: 1 });
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect((await fetchText(running.url)).text).toContain('<h1>Shop</h1>');
    const containers = (await containersOfServer(api, serverId, 'service')).filter((c) => c.Labels['io.teaminfra.service-id'] === serviceId);
    expect(containers).toHaveLength(1);
    expect(containers[0]?.Labels).toMatchObject({ 'io.teaminfra.revision': '1', 'io.teaminfra.server-id': serverId });

    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
    expect(await service(serviceId)).toMatchObject({ state: 'stopped', url: null });
    expect(await tryConnect(portOf(running.url))).toBe('ECONNREFUSED');
    // Started again, it keeps its address.
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    expect((await service(serviceId)).url).toBe(running.url);
  });

  it('redeploy serves the next revision from a new container at the same url, through the service\'s front, and removes the old one', async () => {
    const before = await service(serviceId);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/redeploy`)).toMatchObject({ state: 'succeeded' });
    const after = await service(serviceId);
    expect(after).toMatchObject({ state: 'running', revision: 2, url: before.url });
    // The url's port is the front's, not the revision's: the front forwards to the current revision.
    const front = await api.json<{ HostConfig: { PortBindings: Record<string, { HostPort: string }[]> } }>('GET', `/containers/teaminfra-${serviceId}-front/json`);
    expect(front.HostConfig.PortBindings['8080/tcp']?.[0]?.HostPort).toBe(String(portOf(after.url)));
    expect((await fetchText(after.url)).text).toContain('data-revision="2"');
    const containers = (await containersOfServer(api, serverId, 'service')).filter((c) => c.Labels['io.teaminfra.service-id'] === serviceId);
    expect(containers.map((c) => c.Labels['io.teaminfra.revision'])).toEqual(['2']);
  });

  it('a redeploy whose new container fails its health check fails with the reason and leaves the old one serving', async () => {
    // A bad release: the same image whose command exits at once.
    const broken = await derivedImage(api, image, `teaminfra-test-broken:${serverId.toLowerCase()}`,
      ['CMD ["/usr/local/bin/node","-e","console.error(\'boom: bad release\'); process.exit(3)"]']);
    try {
      await admin(server.dataDir, ['set-server-image', '--server', serverId, '--image', broken]);
      const before = await service(serviceId);
      const failed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/redeploy`);
      expect(failed.state).toBe('failed');
      expect(failed.reason).toContain('Revision 3 did not start (The container exited (code 3) before answering its health check; its last output was "boom: bad release")');
      expect(failed.reason).toContain('so revision 2 keeps serving');
      expect(await service(serviceId)).toMatchObject({ state: 'running', revision: 2, url: before.url });
      expect((await fetchText(before.url)).text).toContain('data-revision="2"');
    } finally {
      await admin(server.dataDir, ['set-server-image', '--server', serverId, '--image', image]);
      await api.json('DELETE', `/images/${encodeURIComponent(broken)}`, { accept: [404, 409] });
    }
  });

  it('a copy sends its reset-password email from its container to the mail catcher', async () => {
    const copied = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/copies`, { name: 'Staging' });
    expect(copied).toMatchObject({ state: 'succeeded' });
    const copyId = copied.service_id as string;
    stagingId = copyId;
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${copyId}/start`)).toMatchObject({ state: 'succeeded' });
    const { url } = await service(copyId);
    const reset = await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(reset.status).toBe(200);
    const emails = await getJson(server.baseUrl, `/api/service-erp/${copyId}/emails`, token);
    expect(emails.body.data).toHaveLength(1);
    expect(emails.body.data[0].subject).toBe('Reset your password for Staging');
    const email = await getJson(server.baseUrl, `/api/emails/${emails.body.data[0].id}`, token);
    // The link in it points at the copy's published address.
    expect(email.body.text_body).toContain(`${url}web/reset_password?token=`);
    // The copy's login to the catcher is kept sealed: what opens it is what the catcher accepted.
    const stored = await server.app.db.kysely.selectFrom('docker_services').select('mail_password').where('service_id', '=', copyId).executeTakeFirstOrThrow();
    expect(isSealed(stored.mail_password as string)).toBe(true);
    const { mail } = await readDockerState(server.app.db.kysely, server.app.secrets, copyId);
    expect(await copyForCredentials(server.app.db.kysely, mail?.username ?? '', mail?.password ?? '')).toMatchObject({ id: copyId });
  });

  const runningContainerOf = async (id: string) =>
    (await containersOfServer(api, serverId, 'service')).filter((c) => c.Labels['io.teaminfra.service-id'] === id && c.State === 'running')[0]!;
  const envOf = async (id: string) => {
    const inspected = await api.json<{ Config: { Env: string[] } }>('GET', `/containers/${(await runningContainerOf(id)).Id}/json`);
    return Object.fromEntries(inspected.Config.Env.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
  };

  it('a relay set on the service is in its container at its next redeploy, with its login; its running copy keeps the mail catcher', async () => {
    const password = 'relay secret p@ss';
    const set = await send(server.baseUrl, 'PUT', `/api/service-erp/${serviceId}/outgoing-mail`, token, {
      relay: { host: '93.184.216.34', port: 587, user: 'erp@example.com', password },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await envOf(serviceId)).TEAMINFRA_SMTP_HOST).toBe('');
    const redeployed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/redeploy`);
    expect(redeployed).toMatchObject({ state: 'succeeded' });
    expect(JSON.stringify(redeployed)).not.toContain(password);
    expect(await envOf(serviceId)).toMatchObject({
      TEAMINFRA_SMTP_HOST: '93.184.216.34', TEAMINFRA_SMTP_PORT: '587', TEAMINFRA_SMTP_USER: 'erp@example.com', TEAMINFRA_SMTP_PASSWORD: password,
    });
    const copyEnv = await envOf(stagingId);
    expect(copyEnv.TEAMINFRA_SMTP_HOST).not.toBe('93.184.216.34');
    expect(JSON.stringify(copyEnv)).not.toContain(password);
    // Removed, it is gone from the container at the next redeploy too.
    expect((await send(server.baseUrl, 'PUT', `/api/service-erp/${serviceId}/outgoing-mail`, token, { relay: null })).status).toBe(200);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/redeploy`)).toMatchObject({ state: 'succeeded' });
    expect(await envOf(serviceId)).toMatchObject({ TEAMINFRA_SMTP_HOST: '', TEAMINFRA_SMTP_PASSWORD: '' });
  });

  it('a relay set while the service is stopped is in its container at its next start; without a change, the start keeps its container', async () => {
    const relay = (value: object | null) => send(server.baseUrl, 'PUT', `/api/service-erp/${serviceId}/outgoing-mail`, token, { relay: value });
    const restart = async () => {
      expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
      expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
    };
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
    expect((await relay({ host: '93.184.216.34', port: 2525 })).status).toBe(200);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
    expect(await envOf(serviceId)).toMatchObject({ TEAMINFRA_SMTP_HOST: '93.184.216.34', TEAMINFRA_SMTP_PORT: '2525', TEAMINFRA_SMTP_USER: '' });

    const kept = (await runningContainerOf(serviceId)).Id;
    await restart();
    expect((await runningContainerOf(serviceId)).Id).toBe(kept);

    expect((await relay(null)).status).toBe(200);
    await restart();
    expect((await runningContainerOf(serviceId)).Id).not.toBe(kept);
    expect(await envOf(serviceId)).toMatchObject({ TEAMINFRA_SMTP_HOST: '', TEAMINFRA_SMTP_PORT: '' });
  });

  it('backup, download and restore: the data is really back, and a safety backup holds what was replaced', async () => {
    const first = await backupNow(serviceId);
    // This node keeps a copy of a new backup (the default bound holds it), until it is downloaded.
    const nodeCopy = nodeCopyOf(server.dataDir, serviceId, first);
    expect(existsSync(nodeCopy)).toBe(true);
    const downloaded = await download(first);
    expect(downloaded.status).toBe(200);
    await expectGone(nodeCopy);
    // Downloaded again: fetched from the engine's backups volume, and let go again.
    expect((await download(first)).bytes.equals(downloaded.bytes)).toBe(true);
    await expectGone(nodeCopy);
    expect([downloaded.headers.get('content-type'), downloaded.headers.get('content-disposition')])
      .toEqual(['application/zstd', `attachment; filename="${first}.tar.zst"`]);
    const backup = await getJson(server.baseUrl, `/api/backups/${first}`, token);
    expect(createHash('sha256').update(downloaded.bytes).digest('hex')).toBe(backup.body.sha256);
    expect(outgoingMailRows((await filesOf(downloaded.bytes)).get('erp.sqlite') as Buffer)).toBe(0);

    // A production service has no outgoing mail: a reset request is recorded as not sent, which changes its data.
    const { url } = await service(serviceId);
    expect((await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) })).status).toBe(503);
    expect(outgoingMailRows((await filesOf((await download(await backupNow(serviceId))).bytes)).get('erp.sqlite') as Buffer)).toBe(1);

    const restored = await act(server.baseUrl, token, 'POST', `/api/backups/${first}/restore`);
    expect(restored).toMatchObject({ state: 'succeeded' });
    expect(await service(serviceId)).toMatchObject({ state: 'running' });
    expect(outgoingMailRows((await filesOf((await download(await backupNow(serviceId))).bytes)).get('erp.sqlite') as Buffer)).toBe(0);
    const backups = (await getJson(server.baseUrl, `/api/service-erp/${serviceId}/backups`, token)).body.data as { id: string; kind: string; state: string }[];
    const safety = backups.find((item) => item.kind === 'safety')?.id as string;
    expect(safety).toBeDefined();
    expect(restored.result).toEqual({ safety_backup_id: safety });
    expect(outgoingMailRows((await filesOf((await download(safety)).bytes)).get('erp.sqlite') as Buffer)).toBe(1);
    // One data volume for the service: the restored one.
    const volumes = (await volumesOfServer(api, serverId)).filter((v) => v.Labels['io.teaminfra.service-id'] === serviceId);
    expect(volumes.map((v) => v.Name)).toEqual([`teaminfra-data-${serviceId}-g1`]);
  });

  it('a restore whose local copy of the backup was damaged fetches it again from the engine, checked against its SHA-256', async () => {
    const backupId = await backupNow(serviceId);
    const row = await server.app.db.kysely.selectFrom('backups').select('file_path').where('id', '=', backupId).executeTakeFirstOrThrow();
    const cached = join(server.dataDir, 'backups', serviceId, `${backupId}.tar.zst`);
    writeFileSync(cached, Buffer.concat([readFileSync(cached), Buffer.from('x')]));
    expect(row.file_path).toMatch(/^docker:\/\//);
    const before = await service(serviceId);
    const restored = await act(server.baseUrl, token, 'POST', `/api/backups/${backupId}/restore`);
    expect(restored.state).toBe('succeeded');
    expect((await service(serviceId)).state).toBe('running');
    expect(before.state).toBe('running');
    // Restored: this node's copy (the one fetched again) has served, and is let go.
    expect(existsSync(cached)).toBe(false);
  });

  it('restores a backup taken before zstd, a gzip-compressed tar, and names and types its download as gzip', async () => {
    const recent = await backupNow(serviceId);
    const recentRow = await server.app.db.kysely.selectFrom('backups').select('file_path').where('id', '=', recent).executeTakeFirstOrThrow();
    const tar = Buffer.concat(await decompressedFile(join(server.dataDir, 'backups', serviceId, `${recent}.tar.zst`), 'zstd').toArray() as Buffer[]);
    // As an earlier teaminfra kept it: a gzip tar, named .tar.gz on the engine and in this node's cache.
    const id = newId('bak');
    const gzipped = gzipSync(tar, { level: 1 });
    const gzipFile = join(server.dataDir, 'backups', serviceId, `${id}.tar.gz`);
    writeFileSync(gzipFile, gzipped);
    const helper = await createHelper(api, { image, serviceId, serverId, mounts: [backupsMount(serverId)] });
    try {
      await api.upload('PUT', `/containers/${helper.id}/archive`, singleFileTar(`${serviceId}/${id}.tar.gz`, gzipFile, gzipped.length),
        'application/x-tar', { query: { path: backupsMount(serverId).at } });
    } finally {
      await helper.remove();
    }
    await insertCompletedBackup(server.app, {
      id, teamId: team.teamId, serviceId, filePath: (recentRow.file_path as string).replace(`${recent}.tar.zst`, `${id}.tar.gz`), bytes: gzipped,
    });
    const downloaded = await download(id);
    expect([downloaded.headers.get('content-type'), downloaded.headers.get('content-disposition')])
      .toEqual(['application/gzip', `attachment; filename="${id}.tar.gz"`]);
    expect(downloaded.bytes.equals(gzipped)).toBe(true);

    const restored = await act(server.baseUrl, token, 'POST', `/api/backups/${id}/restore`);
    expect(restored).toMatchObject({ state: 'succeeded' });
    const after = (await filesOf((await download(await backupNow(serviceId))).bytes)).get('erp.sqlite') as Buffer;
    expect(outgoingMailRows(after)).toBe(outgoingMailRows((await filesOf((await download(recent)).bytes)).get('erp.sqlite') as Buffer));
    expect((await service(serviceId)).state).toBe('running');
  });

  it('backup retention removes the pruned backups of a Docker service from the engine\'s backups volume, and keeps the rest', async () => {
    const older = await backupNow(serviceId);
    const newer = await backupNow(serviceId);
    const pathOf = async (id: string) => (await server.app.db.kysely.selectFrom('backups').select('file_path')
      .where('id', '=', id).executeTakeFirstOrThrow()).file_path as string;
    const [olderPath, newerPath] = [await pathOf(older), await pathOf(newer)];
    expect(await keptOnEngine(olderPath)).toBe(true);

    // Docker servers belong to no node: any node prunes them.
    const removed = await pruneBackups(server.app.db, { node: 'any-node', defaults: { keepManual: 1, keepSafety: 0 } });
    expect(removed).toContain(older);
    expect(removed).not.toContain(newer);
    expect(await keptOnEngine(olderPath)).toBe(false);
    expect(await keptOnEngine(newerPath)).toBe(true);
    expect((await getJson(server.baseUrl, `/api/backups/${older}`, token)).status).toBe(404);
    expect(createHash('sha256').update((await download(newer)).bytes).digest('hex'))
      .toBe((await getJson(server.baseUrl, `/api/backups/${newer}`, token)).body.sha256);
    // No helper is left behind.
    expect((await containersOfServer(api, serverId)).filter((c) => c.Labels['io.teaminfra.role'] === 'helper')).toHaveLength(0);
  });

  it('a backup after the server\'s backups volume was removed makes it again with its labels, and downloads', async () => {
    const volume = `teaminfra-backups-${serverId}`;
    await api.json('DELETE', `/volumes/${volume}`);
    const backupId = await backupNow(serviceId);
    const made = await api.json<{ Labels: Record<string, string> | null }>('GET', `/volumes/${volume}`);
    expect(made.Labels).toEqual({ 'io.teaminfra.server-id': serverId, 'io.teaminfra.role': 'backups' });
    const downloaded = await download(backupId);
    expect(createHash('sha256').update(downloaded.bytes).digest('hex')).toBe((await getJson(server.baseUrl, `/api/backups/${backupId}`, token)).body.sha256);
  });

  it('DELETE removes the service\'s containers and volumes and nothing else of the engine', async () => {
    // Bystanders (other suites share the engine and come and go, so only these are counted on):
    // a container nobody labelled, and one of another service of the same server.
    const bystanders = await Promise.all([{}, { 'io.teaminfra.server-id': serverId, 'io.teaminfra.service-id': 'svc_bystander', 'io.teaminfra.role': 'service' }]
      .map(async (Labels) => (await api.json<{ Id: string }>('POST', '/containers/create', { body: { Image: image, Labels } })).Id));
    try {
      expect(await act(server.baseUrl, token, 'DELETE', `/api/service-erp/${serviceId}`)).toMatchObject({ state: 'succeeded' });
      const left = await containersOfServer(api, serverId);
      expect(left.filter((c) => c.Labels['io.teaminfra.service-id'] === serviceId)).toHaveLength(0);
      expect((await volumesOfServer(api, serverId)).filter((v) => v.Labels['io.teaminfra.service-id'] === serviceId)).toHaveLength(0);
      for (const id of bystanders) expect(await api.json('GET', `/containers/${id}/json`, { accept: [404] })).toMatchObject({ Id: id });
    } finally {
      for (const id of bystanders) await api.json('DELETE', `/containers/${id}`, { query: { force: 1 }, accept: [404] });
    }
  });

  it('a deleted service\'s backups go at the next retention pass: rows, files in the backups volume and this node\'s fetched copies', async () => {
    // As docs/docker-servers.md and docs/operations.md say (issue 37): the DELETE above left them for this pass.
    const backups = await server.app.db.kysely.selectFrom('backups').select(['id', 'file_path']).where('service_id', '=', serviceId)
      .where('state', '=', 'completed').execute();
    expect(backups.length).toBeGreaterThan(0);
    expect(existsSync(join(server.dataDir, 'backups', serviceId))).toBe(true);
    const removed = await pruneBackups(server.app.db, { node: 'any-node', defaults: DEFAULT_RETENTION });
    expect(removed).toEqual(expect.arrayContaining(backups.map((backup) => backup.id)));
    expect(await server.app.db.kysely.selectFrom('backups').select('id').where('service_id', '=', serviceId).execute()).toEqual([]);
    for (const backup of backups) expect(await keptOnEngine(backup.file_path as string)).toBe(false);
    expect(existsSync(join(server.dataDir, 'backups', serviceId))).toBe(false);
  });

  it('reports a volume whose service no longer exists, and leaves it in place', async () => {
    const name = `teaminfra-data-svc_gone${serverId.slice(-6).toLowerCase()}`;
    await api.json('POST', '/volumes/create', { body: { Name: name, Labels: { 'io.teaminfra.server-id': serverId, 'io.teaminfra.service-id': 'svc_gone', 'io.teaminfra.role': 'data' } } });
    const engines = new EngineRegistry();
    try {
      const orphans = await findDockerOrphans(server.app.db.kysely, engines);
      expect(orphans).toContainEqual({ kind: 'volume', name, serviceId: 'svc_gone', serverId, engine: TEST_DOCKER_HOST });
      expect(orphans.filter((orphan) => orphan.serviceId !== 'svc_gone')).toEqual([]);
    } finally {
      await engines.close();
    }
    expect((await volumesOfServer(api, serverId)).map((volume) => volume.Name)).toContain(name);
  });
});
