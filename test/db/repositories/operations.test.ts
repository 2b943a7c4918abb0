// listReachableOperations against a real database (SQLite, and PostgreSQL when configured): page
// by page, the operations each kind of token reaches are exactly those the rule of reach names
// (src/db/repositories/operations.ts), in id order, without gaps or repeats at page boundaries,
// whichever index range each came from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reach } from '../../../src/core/principal.js';
import { newId } from '../../../src/db/ids.js';
import { encodeCursor } from '../../../src/db/pagination.js';
import { insertOperation, listReachableOperations } from '../../../src/db/repositories/operations.js';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { insertTeam } from '../../../src/db/repositories/teams.js';
import { createToken } from '../../../src/db/repositories/tokens.js';
import { openTestDatabase, type TestDatabase } from '../../support/database.js';

interface Row { id: string; serviceId: string | null; serverId: string | null; tokenId: string | null }

describe('listReachableOperations', () => {
  let test: TestDatabase;
  let teamId: string;
  let rows: Row[];
  let services: string[];
  let copyOfFirst: string;
  let servers: string[];
  let listedToken: string;
  let otherToken: string;

  beforeAll(async () => {
    test = await openTestDatabase(undefined, 'reachable-operations');
    const db = test.db.kysely;
    teamId = await insertTeam(db, { name: 'Ops', plan: 'business', timezone: 'UTC' });
    servers = [await insertServer(db, { teamId, name: 'a' }), await insertServer(db, { teamId, name: 'b' })];
    services = [];
    for (let i = 0; i < 8; i++) services.push(await insertService(db, { teamId, serverId: servers[i % 2]!, name: `s${i}` }));
    copyOfFirst = await insertService(db, { teamId, serverId: servers[0]!, name: 'copy', parentId: services[0]! });
    const token = async (serviceIds: string[] | null, serverIds: string[] | null) => (await createToken(db, {
      teamId, name: 't', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [], serviceIds, serverIds, expiresOn: null, createdByUserId: null,
    })).id;
    listedToken = await token([services[0]!, services[3]!], [servers[1]!]);
    otherToken = await token(null, null);
    // Another team's operations, never reached.
    const elsewhere = await insertTeam(db, { name: 'Elsewhere', plan: 'starter', timezone: 'UTC' });
    const theirServer = await insertServer(db, { teamId: elsewhere, name: 'x' });
    rows = [];
    for (let i = 0; i < 150; i++) {
      const kind = i % 6;
      const row: Row = {
        id: newId('op'),
        serviceId: kind === 0 ? null : kind === 1 ? copyOfFirst : services[i % 8]!,
        serverId: kind === 0 ? servers[i % 2]! : null,
        tokenId: i % 7 === 0 ? listedToken : otherToken,
      };
      rows.push(row);
      await insertOperation(db, {
        teamId, kind: kind === 0 ? 'create_server' : 'start', serviceId: row.serviceId, serverId: row.serverId, parameters: {},
        tokenId: row.tokenId, channel: 'api', idempotencyKey: null, fingerprint: null,
      }, row.id, new Date().toISOString());
      if (i % 10 === 0) {
        await insertOperation(db, {
          teamId: elsewhere, kind: 'create_server', serviceId: null, serverId: theirServer, parameters: {}, tokenId: null, channel: 'api',
          idempotencyKey: null, fingerprint: null,
        }, newId('op'), new Date().toISOString());
      }
    }
  });
  afterAll(async () => { await test.close(); });

  async function everyPage(reach: Reach, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listReachableOperations(test.db.kysely, reach, { limit, cursor });
      const shown = page.slice(0, limit).map((row) => row.id);
      ids.push(...shown);
      if (page.length <= limit) return ids;
      cursor = encodeCursor(shown.at(-1)!);
    }
  }

  const reached = (listed: string[]) => new Set([...listed, ...(listed.includes(services[0]!) ? [copyOfFirst] : [])]);
  const cases: { name: string; reach: () => Reach; expected: (row: Row) => boolean }[] = [
    { name: 'a token limited to services and servers reaches its requests, server operations on listed servers, and its services with their copies',
      reach: () => ({ teamId, tokenId: listedToken, restrictServices: true, restrictServers: true }),
      expected: (row) => row.tokenId === listedToken || (row.serviceId === null ? row.serverId === servers[1] : reached([services[0]!, services[3]!]).has(row.serviceId)) },
    { name: 'a token limited to services only reaches every operation about no service',
      reach: () => ({ teamId, tokenId: listedToken, restrictServices: true, restrictServers: false }),
      expected: (row) => row.tokenId === listedToken || row.serviceId === null || reached([services[0]!, services[3]!]).has(row.serviceId) },
    { name: 'a token without the permission reaches only what it requested',
      reach: () => ({ teamId, tokenId: listedToken, restrictServices: true, restrictServers: true, requestedOnly: true }),
      expected: (row) => row.tokenId === listedToken },
    { name: 'a token of the whole team reaches every operation of the team',
      reach: () => ({ teamId, tokenId: otherToken, restrictServices: false, restrictServers: false }),
      expected: () => true },
  ];

  for (const { name, reach, expected } of cases) {
    it(`pages exactly through what ${name.replace(/^a token/, 'the token')}`, async () => {
      const want = rows.filter(expected).map((row) => row.id).sort();
      expect(want.length).toBeGreaterThan(10);
      for (const limit of [1, 7, 50, 200]) expect(await everyPage(reach(), limit)).toEqual(want);
    });
  }
});
