// ERP services on a Docker server with data of a real size (60 MB, not the demo's few KB, which
// hid an engine deadlock that the first real ERP hit on its first copy): a copy, a backup, its
// download and a restore each finish and carry the data whole, and operations on the engine's
// other services, asked while the copy runs, are not held up by it.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decompressedFile } from '../../../src/engine/backup-compression.js';
import { extractSingleFile } from '../../../src/engine/docker/archives.js';
import { getJson, type TestServer } from '../../support/fixtures.js';
import { act, send, waitForOperation } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam } from './support/docker-team.js';
import { expectGone, nodeCopiesBytes, nodeCopyOf } from './support/node-backup-copies.js';
import { digestOfDatabase, editServiceDatabase, growServiceDatabase, productsDigest, type VolumeOf } from './support/service-volume.js';

const DATA_BYTES = 60_000_000;
/** This node's copies of backups kept on the engine: room for one backup of this service, not two. */
const CACHE_BYTES = 50 * 1024 * 1024;

describe.runIf(dockerAvailable)('ERP services of 60 MB on a Docker server', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let where: VolumeOf;
  const services: Record<'big' | 'other' | 'third', string> = { big: '', other: '', third: '' };
  let original: { count: number; sha256: string };

  const create = async (name: string) => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name });
    expect(created).toMatchObject({ state: 'succeeded' });
    return created.service_id as string;
  };
  /** The products of a backup: downloaded over REST, checked against its SHA-256, decompressed and read. */
  const backupDigest = async (backupId: string) => {
    const folder = mkdtempSync(join(tmpdir(), 'teaminfra-download-'));
    try {
      const response = await fetch(`${server.baseUrl}/api/backups/${backupId}/download`, { headers: { Authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const bytes = Buffer.from(await response.arrayBuffer());
      const recorded = await getJson(server.baseUrl, `/api/backups/${backupId}`, token);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(recorded.body.sha256);
      expect(bytes.length).toBe(recorded.body.size_bytes);
      writeFileSync(join(folder, 'backup.tar.zst'), bytes);
      await extractSingleFile(decompressedFile(join(folder, 'backup.tar.zst'), 'zstd'), join(folder, 'erp.sqlite'));
      return { ...digestOfDatabase(join(folder, 'erp.sqlite')), compressedBytes: bytes.length };
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  };

  beforeAll(async () => {
    const team = await startDockerTeam({
      engine: { startTimeoutMs: 30_000, backupCacheBytes: CACHE_BYTES }, mail: { host: '0.0.0.0', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 },
    });
    ({ server, token } = team);
    await server.app.mailCatcher.start();
    serverId = await team.addServer('docker-large');
    where = { api, db: server.app.db.kysely, image: team.image, serverId };
    for (const name of ['big', 'other', 'third'] as const) services[name] = await create(name);
    expect(await growServiceDatabase(where, services.big, DATA_BYTES)).toBeGreaterThan(DATA_BYTES);
    original = await productsDigest(where, services.big);
    for (const id of Object.values(services)) expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${id}/start`)).toMatchObject({ state: 'succeeded' });
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  });

  it('a copy of it finishes with the same data, while a copy and a stop of other services of the engine, asked during it, finish too', async () => {
    const bigCopy = await send(server.baseUrl, 'POST', `/api/service-erp/${services.big}/copies`, token, { name: 'big staging' });
    const otherCopy = await send(server.baseUrl, 'POST', `/api/service-erp/${services.other}/copies`, token, { name: 'other staging' });
    const thirdStop = await send(server.baseUrl, 'POST', `/api/service-erp/${services.third}/stop`, token);
    expect([bigCopy.status, otherCopy.status, thirdStop.status]).toEqual([202, 202, 202]);
    const [big, other, third] = await Promise.all([bigCopy, otherCopy, thirdStop].map((accepted) =>
      waitForOperation(server.baseUrl, token, accepted.body.id, 180_000)));
    expect([big?.state, other?.state, third?.state]).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(await productsDigest(where, big?.service_id)).toEqual(original);
    expect(original.count).toBeGreaterThan(DATA_BYTES / 1_100);
  }, 240_000);

  it('a backup of it downloads whole, and restoring it after a change brings the data back, with the change kept in a safety backup', async () => {
    const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${services.big}/backups`);
    expect(backup).toMatchObject({ state: 'succeeded' });
    const taken = await backupDigest(backup.backup_id);
    expect({ count: taken.count, sha256: taken.sha256 }).toEqual(original);
    // Random names: the archive stays large, as a real database's would.
    expect(taken.compressedBytes).toBeGreaterThan(DATA_BYTES / 3);

    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${services.big}/stop`)).toMatchObject({ state: 'succeeded' });
    await editServiceDatabase(where, services.big, (sqlite) => sqlite.prepare('DELETE FROM products WHERE id % 2 = 0').run());
    const changed = await productsDigest(where, services.big);
    expect(changed.count).toBeLessThan(original.count);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${services.big}/start`)).toMatchObject({ state: 'succeeded' });

    expect(await act(server.baseUrl, token, 'POST', `/api/backups/${backup.backup_id}/restore`)).toMatchObject({ state: 'succeeded' });
    expect((await getJson(server.baseUrl, `/api/service-erp/${services.big}`, token)).body.state).toBe('running');
    expect(await productsDigest(where, services.big)).toEqual(original);
    const backups = (await getJson(server.baseUrl, `/api/service-erp/${services.big}/backups`, token)).body.data as { id: string; kind: string }[];
    const safety = backups.find((item) => item.kind === 'safety');
    expect(safety).toBeDefined();
    const kept = await backupDigest(safety?.id as string);
    expect({ count: kept.count, sha256: kept.sha256 }).toEqual(changed);
  }, 240_000);

  it('keeps this node\'s copies of its backups within the bound, lets one go once downloaded, and downloads any from the engine', async () => {
    let largest = 0;
    const sampler = setInterval(() => { largest = Math.max(largest, nodeCopiesBytes(server.dataDir)); }, 5);
    const taken: { id: string; bytes: number }[] = [];
    try {
      for (let count = 0; count < 3; count++) {
        const backup = await act(server.baseUrl, token, 'POST', `/api/service-erp/${services.big}/backups`);
        expect(backup).toMatchObject({ state: 'succeeded' });
        taken.push({ id: backup.backup_id, bytes: (await getJson(server.baseUrl, `/api/backups/${backup.backup_id}`, token)).body.size_bytes });
        largest = Math.max(largest, nodeCopiesBytes(server.dataDir));
      }
      // Tens of MB each: the bound holds one, so each new one made room by letting the one before go.
      for (const backup of taken) expect(backup.bytes).toBeGreaterThan(CACHE_BYTES / 3);
      const [oldest, , newest] = taken.map((backup) => nodeCopyOf(server.dataDir, services.big, backup.id)) as [string, string, string];
      expect([existsSync(oldest), existsSync(newest)]).toEqual([false, true]);
      await backupDigest(taken[2]!.id);
      await expectGone(newest);
      // Twice, and the oldest: each fetched from the engine's backups volume, checked, and let go again.
      await backupDigest(taken[2]!.id);
      await backupDigest(taken[0]!.id);
      await expectGone(newest);
      await expectGone(oldest);
    } finally {
      clearInterval(sampler);
    }
    expect(largest).toBeGreaterThan(CACHE_BYTES / 3);
    expect(largest).toBeLessThanOrEqual(CACHE_BYTES);
  }, 300_000);
});
