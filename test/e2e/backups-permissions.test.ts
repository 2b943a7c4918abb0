// Each permission alone allows exactly its backup operations, over REST with the engine running:
// download without restore, restore without download, create (which reads) without either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSION_IDS, type PermissionId } from '../../src/auth/permissions.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, killProcessesMatching, send, waitForOperation } from '../engine/support/engine-http.js';

type Operation = 'list' | 'get' | 'create' | 'download' | 'restore';

/** What each permission alone allows, from the permission table (write implies read; download and restore are their own). */
const ALLOWED: Record<PermissionId, Operation[]> = {
  'services:read': [], 'services:operate': [], 'services:write': [], 'services:logs': [], 'servers:read': [], 'servers:write': [],
  'backups:read': ['list', 'get'],
  'backups:create': ['list', 'get', 'create'],
  'backups:download': ['download'],
  'backups:restore': ['restore'],
  // Deleting is lowering a schedule's retention, which takes backups:create as well (test/tools/backups/set-backup-schedule.test.ts).
  'backups:delete': [],
  'mailcatcher:read': [], 'decisions:read': [], 'decisions:request': [], 'decisions:answer': [], 'activity:read': [],
};

const REQUIRED: Record<Operation, PermissionId> = {
  list: 'backups:read', get: 'backups:read', create: 'backups:create', download: 'backups:download', restore: 'backups:restore',
};

describe('backup permissions', () => {
  let server: TestServer;
  let team: SeededTeam;
  let full: string;
  let backupId: string;

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    full = (await makeToken(server.app, team.teamId)).value;
    await act(server.baseUrl, full, 'POST', `/api/service-erp/${team.serviceIds[0]}/start`);
    backupId = (await act(server.baseUrl, full, 'POST', `/api/service-erp/${team.serviceIds[0]}/backups`)).backup_id;
  });
  afterAll(async () => {
    const dataDir = server.dataDir;
    await server.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  async function attempt(operation: Operation, token: string): Promise<number> {
    const serviceId = team.serviceIds[0];
    const [method, path] = {
      list: ['GET', `/api/service-erp/${serviceId}/backups`],
      get: ['GET', `/api/backups/${backupId}`],
      create: ['POST', `/api/service-erp/${serviceId}/backups`],
      download: ['GET', `/api/backups/${backupId}/download`],
      restore: ['POST', `/api/backups/${backupId}/restore`],
    }[operation];
    const response = await fetch(server.baseUrl + path, { method, headers: { Authorization: `Bearer ${token}` } });
    const text = await response.text();
    if (response.status === 403) expect(JSON.parse(text).detail).toBe(`This API token does not have the ${REQUIRED[operation]} scope.`);
    // An accepted action runs to its end, so the next one on the service is not refused as busy.
    if (response.status === 202) expect((await waitForOperation(server.baseUrl, full, JSON.parse(text).id)).state).toBe('succeeded');
    return response.status;
  }

  for (const permission of PERMISSION_IDS) {
    it(`allows exactly ${ALLOWED[permission].join(', ') || 'no backup operation'} to a token with only ${permission}`, async () => {
      const token = (await makeToken(server.app, team.teamId, { permissions: [permission] })).value;
      const outcomes: Record<string, number> = {};
      for (const operation of ['list', 'get', 'create', 'download', 'restore'] as const) outcomes[operation] = await attempt(operation, token);
      const expected = Object.fromEntries((['list', 'get', 'create', 'download', 'restore'] as const).map((operation) => [
        operation,
        ALLOWED[permission].includes(operation) ? { list: 200, get: 200, create: 202, download: 200, restore: 202 }[operation] : 403,
      ]));
      expect(outcomes).toEqual(expected);
    });
  }

  it('lets download and restore together do both, and neither implies the other', async () => {
    const both = (await makeToken(server.app, team.teamId, { permissions: ['backups:download', 'backups:restore'] })).value;
    expect([await attempt('download', both), await attempt('restore', both)]).toEqual([200, 202]);
    const restoreOnly = (await makeToken(server.app, team.teamId, { permissions: ['backups:restore'] })).value;
    expect(await attempt('download', restoreOnly)).toBe(403);
    const downloadOnly = (await makeToken(server.app, team.teamId, { permissions: ['backups:download'] })).value;
    expect(await attempt('restore', downloadOnly)).toBe(403);
  });

  it('is 403 for a backup the token may not touch and 404 for one outside its reach, in that order', async () => {
    const elsewhere = (await makeToken(server.app, team.teamId, { permissions: ['backups:download'], services: [team.serviceIds[1]] })).value;
    expect(await attempt('download', elsewhere)).toBe(404);
    expect(await attempt('restore', elsewhere)).toBe(403);
    const body = (await send(server.baseUrl, 'GET', `/api/backups/${backupId}`, elsewhere)).body;
    expect(body.code).toBe('missing_permission');
  });
});
