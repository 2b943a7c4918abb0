// The prepared-statement fast path (a better-sqlite3 statement on SQLite, a named prepared
// statement on PostgreSQL) answers exactly what the same Kysely query answers (the fallback used
// inside transactions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertService } from '../../src/db/repositories/services.js';
import { listReachableServices } from '../../src/db/repositories/services.js';
import { findTokenWithTeamByHash } from '../../src/db/repositories/tokens.js';
import { hashTokenValue } from '../../src/auth/token-format.js';
import { fastPathFor } from '../../src/db/connect.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

describe(`prepared-statement fast path (${process.env.TEAMINFRA_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'})`, () => {
  let server: TestServer;
  let team: SeededTeam;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    for (let index = 0; index < 7; index += 1) {
      await insertService(server.app.db.kysely, { teamId: team.teamId, serverId: team.serverIds[0], name: `extra ${index}` });
    }
  });
  afterAll(async () => { await server.close(); });

  it('is there to take, outside transactions', async () => {
    const db = server.app.db.kysely;
    expect(fastPathFor(db)).toBeDefined();
    await db.transaction().execute(async (trx) => { expect(fastPathFor(trx)).toBeUndefined(); });
  });

  it('lists the same services as Kysely for every reach, page and parent', async () => {
    const db = server.app.db.kysely;
    const tokens = [
      await makeToken(server.app, team.teamId),
      await makeToken(server.app, team.teamId, { services: [team.serviceIds[0]] }),
      await makeToken(server.app, team.teamId, { services: [] }),
    ];
    for (const token of tokens) {
      const row = await findTokenWithTeamByHash(db, hashTokenValue(token.value));
      const reach = { teamId: team.teamId, tokenId: token.id, restrictServices: row!.restrict_services === 1, restrictServers: false };
      for (const parentId of [null, team.serviceIds[0]]) {
        for (const limit of [1, 3, 50]) {
          const fast = await listReachableServices(db, reach, { limit }, parentId);
          const viaKysely = await db.transaction().execute((trx) => listReachableServices(trx, reach, { limit }, parentId));
          expect(fast).toEqual(viaKysely);
          const last = fast[Math.min(limit, fast.length) - 1];
          if (last) {
            const cursor = Buffer.from(last.id).toString('base64url');
            expect(await listReachableServices(db, reach, { limit, cursor }, parentId))
              .toEqual(await db.transaction().execute((trx) => listReachableServices(trx, reach, { limit, cursor }, parentId)));
          }
        }
      }
    }
  });

  it('finds the same token row as Kysely', async () => {
    const token = await makeToken(server.app, team.teamId, { permissions: ['services:read'] });
    const hash = hashTokenValue(token.value);
    const fast = await findTokenWithTeamByHash(server.app.db.kysely, hash);
    const viaKysely = await server.app.db.kysely.transaction().execute((trx) => findTokenWithTeamByHash(trx, hash));
    expect(fast).toEqual(viaKysely);
    expect(fast?.id).toBe(token.id);
    expect(await findTokenWithTeamByHash(server.app.db.kysely, hashTokenValue('tinf_nothing'))).toBeUndefined();
  });
});
