// Backups over REST with the engine running: a backup of a running service completes with its
// size and SHA-256; its download (whole, or in two ranges, or through an MCP link) gives exactly
// those bytes; a restore brings back rows deleted after the backup, keeps what it replaced in a
// safety backup, and can go into a copy of the service.
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decompress as zstdDecompress } from 'zstd-napi';
import { invoke } from '../../src/core/invoke.js';
import { newId } from '../../src/db/ids.js';
import { catalog } from '../../tools/index.js';
import { insertCompletedBackup, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, fetchText, killProcessesMatching, processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { countProducts, deleteProducts, download, serviceDatabase, sha256Hex } from '../engine/support/service-data.js';

describe('backups of an ERP service', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let serviceId: string;
  let backup: { id: string; size_bytes: number; sha256: string };
  const database = (id: string) => serviceDatabase(server.dataDir, team.serverIds[0], id);
  const serviceUrl = async (id: string) => (await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body.url as string;

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    serviceId = team.serviceIds[0];
    token = (await makeToken(server.app, team.teamId)).value;
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
  });
  afterAll(async () => {
    const dataDir = server.dataDir;
    await server.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  it('POST /api/service-erp/{id}/backups answers 202 naming the backup, which completes with its size and SHA-256', async () => {
    const creator = (await makeToken(server.app, team.teamId, { permissions: ['backups:create'] })).value;
    const accepted = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/backups`, creator);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ kind: 'backup', service_id: serviceId, backup_id: expect.stringMatching(/^bak_/) });
    const pending = await send(server.baseUrl, 'GET', `/api/backups/${accepted.body.backup_id}`, creator);
    expect(pending.body).toMatchObject({ state: expect.stringMatching(/^(pending|completed)$/), kind: 'manual', service_id: serviceId });
    expect((await waitForOperation(server.baseUrl, token, accepted.body.id)).state).toBe('succeeded');

    backup = (await send(server.baseUrl, 'GET', `/api/backups/${accepted.body.backup_id}`, creator)).body;
    expect(backup).toMatchObject({ state: 'completed', reason: null, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(backup.size_bytes).toBeGreaterThan(0);
    // The service kept running throughout.
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
    const completed = await server.app.db.kysely.selectFrom('events').select('payload')
      .where('team_id', '=', team.teamId).where('type', '=', 'backup.completed').execute();
    expect(JSON.parse(completed[0]?.payload as string).data).toEqual({
      backup: { id: backup.id, service_id: serviceId, state: 'completed', size_bytes: backup.size_bytes, sha256: backup.sha256, kind: 'manual' }, reason: null,
    });
  });

  it('GET /api/backups/{id}/download serves the file whose SHA-256 is the row\'s and the Repr-Digest', async () => {
    const downloader = (await makeToken(server.app, team.teamId, { permissions: ['backups:download'] })).value;
    const whole = await download(`${server.baseUrl}/api/backups/${backup.id}/download`, downloader);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('application/zstd');
    expect(whole.headers.get('content-disposition')).toBe(`attachment; filename="${backup.id}.sqlite.zst"`);
    expect(Number(whole.headers.get('content-length'))).toBe(backup.size_bytes);
    expect(whole.headers.get('repr-digest')).toBe(`sha-256=:${Buffer.from(backup.sha256, 'hex').toString('base64')}:`);
    expect(sha256Hex(whole.bytes)).toBe(backup.sha256);
    expect(zstdDecompress(whole.bytes).subarray(0, 15).toString('latin1')).toBe('SQLite format 3');
  });

  it('reassembles the same SHA-256 from a download in two ranges', async () => {
    const downloader = (await makeToken(server.app, team.teamId, { permissions: ['backups:download'] })).value;
    const url = `${server.baseUrl}/api/backups/${backup.id}/download`;
    const middle = Math.floor(backup.size_bytes / 2);
    const first = await download(url, downloader, `bytes=0-${middle - 1}`);
    const rest = await download(url, downloader, `bytes=${middle}-`);
    expect([first.status, rest.status]).toEqual([206, 206]);
    expect(first.headers.get('content-range')).toBe(`bytes 0-${middle - 1}/${backup.size_bytes}`);
    expect(rest.headers.get('content-range')).toBe(`bytes ${middle}-${backup.size_bytes - 1}/${backup.size_bytes}`);
    const digest = Buffer.from((first.headers.get('repr-digest') as string).slice('sha-256=:'.length, -1), 'base64').toString('hex');
    expect(sha256Hex(Buffer.concat([first.bytes, rest.bytes]))).toBe(backup.sha256);
    expect(digest).toBe(backup.sha256);
  });

  it('gives MCP a single-use link to the same bytes', async () => {
    const downloader = await makeToken(server.app, team.teamId, { permissions: ['backups:download'] });
    const capability = catalog.find((entry) => entry.name === 'download_backup')!;
    const link = await invoke(capability, { backup_id: backup.id }, { bearer: downloader.value, channel: 'mcp' }, { ...server.app, publicUrl: server.baseUrl }) as
      { download_url: string; sha256: string; size_bytes: number };
    expect(link).toMatchObject({ sha256: backup.sha256, size_bytes: backup.size_bytes, content_type: 'application/zstd' });
    const fetched = await download(link.download_url, null);
    expect(sha256Hex(fetched.bytes)).toBe(backup.sha256);
    expect((await download(link.download_url, null)).status).toBe(404);
  });

  it('POST /api/backups/{id}/restore brings back rows deleted after the backup, and keeps the replaced data in a safety backup', async () => {
    deleteProducts(database(serviceId), 2);
    const url = await serviceUrl(serviceId);
    expect((await fetchText(url)).text).toContain('Products: 2');
    const [pidBefore] = processesMatching(serviceId);

    const restorer = (await makeToken(server.app, team.teamId, { permissions: ['backups:restore'] })).value;
    const accepted = await send(server.baseUrl, 'POST', `/api/backups/${backup.id}/restore`, restorer);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ kind: 'restore', service_id: serviceId, backup_id: backup.id });
    expect((await waitForOperation(server.baseUrl, token, accepted.body.id)).state).toBe('succeeded');

    expect(countProducts(database(serviceId))).toBe(5);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body).toMatchObject({ state: 'running', url });
    expect((await fetchText(url)).text).toContain('Products: 5');
    expect(processesMatching(serviceId)).toHaveLength(1);
    expect(processesMatching(serviceId)[0]).not.toBe(pidBefore);

    const backups = (await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}/backups`, token)).body.data as { id: string; kind: string; state: string }[];
    const safety = backups.find((item) => item.kind === 'safety');
    expect(safety).toMatchObject({ state: 'completed' });
    // The restore names it, for its requester and for any other reader of the operation.
    expect((await send(server.baseUrl, 'GET', `/api/operations/${accepted.body.id}`, restorer)).body.result).toEqual({ safety_backup_id: safety?.id });
    expect((await send(server.baseUrl, 'GET', `/api/operations/${accepted.body.id}`, token)).body.result).toEqual({ safety_backup_id: safety?.id });
    const safetyBytes = (await download(`${server.baseUrl}/api/backups/${safety?.id}/download`, token)).bytes;
    const safetyFile = join(server.dataDir, 'safety.sqlite');
    writeFileSync(safetyFile, zstdDecompress(safetyBytes));
    expect(countProducts(safetyFile)).toBe(2);

    const events = await server.app.db.kysely.selectFrom('events').select(['type', 'payload'])
      .where('team_id', '=', team.teamId).where('payload', 'like', `%${accepted.body.id}%`).orderBy('id').execute();
    expect(events.map((event) => event.type)).toEqual([
      'service.restoring', 'operation.queued', 'operation.running', 'operation.succeeded', 'restore.completed',
    ]);
    expect(JSON.parse(events[4]?.payload as string).data).toEqual({
      service_id: serviceId, backup_id: backup.id, operation_id: accepted.body.id, reason: null,
    });
  });

  it('restores into a copy of the service, leaving the service itself alone', async () => {
    const copy = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/copies`, { name: 'Restore target' });
    const copyId = copy.service_id as string;
    deleteProducts(database(copyId), 1);
    deleteProducts(database(serviceId), 3);
    const done = await act(server.baseUrl, token, 'POST', `/api/backups/${backup.id}/restore`, { target_service_id: copyId });
    expect(done).toMatchObject({ state: 'succeeded', service_id: copyId });
    expect(countProducts(database(copyId))).toBe(5);
    expect(countProducts(database(serviceId))).toBe(3);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${copyId}`, token)).body.state).toBe('stopped');
  });

  it('refuses to restore into a service that is neither the backed-up one nor one of its copies', async () => {
    const refused = await send(server.baseUrl, 'POST', `/api/backups/${backup.id}/restore`, token, { target_service_id: team.serviceIds[1] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'validation_failed', detail: 'A backup can be restored only into the service it was taken of, or into one of its copies.',
      errors: [{ field: 'target_service_id', message: `Use ${serviceId} or one of its copies.` }],
    });
    const restricted = (await makeToken(server.app, team.teamId, { services: [serviceId] })).value;
    const outside = await send(server.baseUrl, 'POST', `/api/backups/${backup.id}/restore`, restricted, { target_service_id: team.serviceIds[1] });
    expect(outside.status).toBe(404);
  });

  it('still downloads and restores a backup taken before zstd, a gzip file', async () => {
    const row = await server.app.db.kysely.selectFrom('backups').select('file_path').where('id', '=', backup.id).executeTakeFirstOrThrow();
    const gzipped = gzipSync(zstdDecompress(readFileSync(row.file_path as string)), { level: 1 });
    const id = newId('bak');
    const file = (row.file_path as string).replace(/[^/]+$/, `${id}.sqlite.gz`);
    writeFileSync(file, gzipped);
    await insertCompletedBackup(server.app, { id, teamId: team.teamId, serviceId, filePath: file, bytes: gzipped });

    const whole = await download(`${server.baseUrl}/api/backups/${id}/download`, token);
    expect(whole.headers.get('content-type')).toBe('application/gzip');
    expect(whole.headers.get('content-disposition')).toBe(`attachment; filename="${id}.sqlite.gz"`);
    expect(sha256Hex(whole.bytes)).toBe(sha256Hex(gzipped));

    deleteProducts(database(serviceId), 4);
    expect((await act(server.baseUrl, token, 'POST', `/api/backups/${id}/restore`)).state).toBe('succeeded');
    expect(countProducts(database(serviceId))).toBe(5);
    // Its safety backup, like every backup taken now, is zstd.
    const safety = await server.app.db.kysely.selectFrom('backups').select('file_path').where('service_id', '=', serviceId)
      .where('kind', '=', 'safety').orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(safety.file_path).toMatch(/\.sqlite\.zst$/);
    expect(zstdDecompress(readFileSync(safety.file_path as string)).subarray(0, 15).toString('latin1')).toBe('SQLite format 3');
  });
});
