// Bad input loses nothing: restoring a backup that was damaged, truncated, or holds a database
// that fails SQLite's integrity check fails with a reason that says so, before anything is
// touched: the service keeps its data and its very process, and no safety backup is taken.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import { newId } from '../../src/db/ids.js';
import { insertCompletedBackup, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, fetchText, killProcessesMatching, processesMatching, send } from '../engine/support/engine-http.js';
import { countProducts, deleteProducts, serviceDatabase, sha256Hex } from '../engine/support/service-data.js';

describe('restoring a bad backup', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let serviceId: string;
  let good: { id: string; file: string };

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    serviceId = team.serviceIds[0];
    token = (await makeToken(server.app, team.teamId)).value;
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    const done = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    const row = await server.app.db.kysely.selectFrom('backups').select(['id', 'file_path']).where('id', '=', done.backup_id).executeTakeFirstOrThrow();
    good = { id: row.id, file: row.file_path as string };
    // After the backup, so a restore would visibly change the data.
    deleteProducts(serviceDatabase(server.dataDir, team.serverIds[0], serviceId), 1);
  });
  afterAll(async () => {
    const dataDir = server.dataDir;
    await server.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  /** A completed backup row for `bytes`, recorded with `checksum` (the bytes' own by default). */
  async function backupOf(bytes: Buffer, checksum = sha256Hex(bytes)): Promise<string> {
    const id = newId('bak');
    const file = `${good.file}.${id}`;
    writeFileSync(file, bytes);
    return insertCompletedBackup(server.app, { id, teamId: team.teamId, serviceId, filePath: file, bytes, sha256: checksum });
  }

  async function expectRestoreRefused(backupId: string, reason: string | RegExp): Promise<void> {
    const url = (await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.url as string;
    const pids = processesMatching(serviceId);
    const backupsBefore = await server.app.db.kysely.selectFrom('backups').select('id').where('service_id', '=', serviceId).execute();

    const done = await act(server.baseUrl, token, 'POST', `/api/backups/${backupId}/restore`);
    expect(done.state).toBe('failed');
    expect(done.reason).toMatch(reason);
    expect(countProducts(serviceDatabase(server.dataDir, team.serverIds[0], serviceId))).toBe(1);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body).toMatchObject({ state: 'running', url });
    expect(processesMatching(serviceId)).toEqual(pids);
    expect((await fetchText(url)).text).toContain('Products: 1');
    const backupsAfter = await server.app.db.kysely.selectFrom('backups').select('id').where('service_id', '=', serviceId).execute();
    expect(backupsAfter).toHaveLength(backupsBefore.length);
    const failed = await server.app.db.kysely.selectFrom('events').select('payload')
      .where('type', '=', 'restore.failed').where('payload', 'like', `%${done.id}%`).executeTakeFirstOrThrow();
    expect(JSON.parse(failed.payload).data).toEqual({ service_id: serviceId, backup_id: backupId, operation_id: done.id, reason: done.reason });
  }

  it('fails with the checksum reason when the file was changed after the backup', async () => {
    const bytes = readFileSync(good.file);
    const recorded = sha256Hex(bytes);
    const middle = bytes.length >> 1;
    bytes.writeUInt8(bytes.readUInt8(middle) ^ 0x01, middle);
    const id = await backupOf(bytes, recorded);
    await expectRestoreRefused(id, new RegExp(
      `^The backup file does not match its SHA-256 checksum \\(expected ${recorded}, found ${sha256Hex(bytes)}\\): it was changed or damaged after it was taken\\.$`));
  });

  it('refuses to serve a backup damaged on disk (409 saying so), where it served it as 200 with the recorded digest', async () => {
    const bytes = readFileSync(good.file);
    const backupId = await backupOf(bytes);
    const file = (await server.app.db.kysely.selectFrom('backups').select('file_path').where('id', '=', backupId).executeTakeFirstOrThrow()).file_path as string;
    const url = `${server.baseUrl}/api/backups/${backupId}/download`;
    const headers = { Authorization: `Bearer ${token}` };
    expect((await fetch(url, { headers })).status).toBe(200);
    const damaged = Buffer.from(bytes);
    const middle = damaged.length >> 1;
    damaged.writeUInt8(damaged.readUInt8(middle) ^ 0xff, middle);
    writeFileSync(file, damaged);
    for (const range of [undefined, 'bytes=0-99']) {
      const response = await fetch(url, { headers: { ...headers, ...(range ? { Range: range } : {}) } });
      expect(response.status, range ?? 'whole').toBe(409);
      expect((await response.json() as { detail: string }).detail).toMatch(/is damaged on the server: its contents no longer match the checksum/);
    }
    writeFileSync(file, bytes.subarray(0, bytes.length - 10));
    expect((await fetch(url, { headers })).status).toBe(409);
  });

  it('fails with the zstd reason when the file is truncated (even with a checksum of the truncated file)', async () => {
    const bytes = readFileSync(good.file);
    const id = await backupOf(bytes.subarray(0, bytes.length >> 1));
    await expectRestoreRefused(id, /^The backup file is not a complete zstd file \(Stream ended in middle of compressed data frame\)\.$/);
  });

  it('fails with the gzip reason when a backup taken before zstd is truncated', async () => {
    const bytes = gzipSync(zstdDecompress(readFileSync(good.file)));
    const id = await backupOf(bytes.subarray(0, bytes.length >> 1));
    await expectRestoreRefused(id, /^The backup file is not a complete gzip file \(unexpected end of file\)\.$/);
  });

  it('fails with the integrity reason when the database in the file is corrupt', async () => {
    const database = zstdDecompress(readFileSync(good.file));
    // Page 2 onwards holds the tables' b-trees; scribble over a few pages.
    const corrupt = Buffer.from(database);
    corrupt.fill(0x5a, 4096 + 10, Math.min(corrupt.length, 4096 * 4));
    const id = await backupOf(zstdCompress(corrupt));
    await expectRestoreRefused(id, /^The backup(?:'s database failed SQLite's integrity check: .+| does not hold a sound SQLite database \(.+\))\.$/);
  });

  it('fails and changes nothing for a file that is missing, then restores the good backup', async () => {
    const id = await backupOf(Buffer.from('gone'));
    const row = await server.app.db.kysely.selectFrom('backups').select('file_path').where('id', '=', id).executeTakeFirstOrThrow();
    rmSync(row.file_path as string);
    await expectRestoreRefused(id, /^The backup file is missing from the server\.$/);

    expect((await act(server.baseUrl, token, 'POST', `/api/backups/${good.id}/restore`)).state).toBe('succeeded');
    expect(countProducts(serviceDatabase(server.dataDir, team.serverIds[0], serviceId))).toBe(5);
  });

  it('fails a restore into a stopped service and leaves it stopped with its data', async () => {
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`);
    deleteProducts(serviceDatabase(server.dataDir, team.serverIds[0], serviceId), 4);
    const id = await backupOf(Buffer.from('not compressed at all'));
    const done = await act(server.baseUrl, token, 'POST', `/api/backups/${id}/restore`);
    expect(done.reason).toBe('The backup file is neither zstd- nor gzip-compressed, so it is not a backup teaminfra took.');
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('stopped');
    expect(countProducts(serviceDatabase(server.dataDir, team.serverIds[0], serviceId))).toBe(4);
    expect(processesMatching(serviceId)).toEqual([]);
  });
});
