// serviceIdsNamed against a real database (SQLite, and PostgreSQL when configured): whichever way
// a search is served (from its rarest three-character piece, or by the walk of the team's names
// when every piece is common or the search is shorter than a piece), it finds exactly the
// services whose name contains it, ignoring case, in id order, page after page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, nowIso } from '../../../src/db/ids.js';
import { insertServer } from '../../../src/db/repositories/servers.js';
import {
  indexServiceNames, piecesOf, RARE_ENOUGH, serviceIdsNamed, WALK_LIMIT, type NameSearch,
} from '../../../src/db/repositories/service-name-search.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { insertTeam } from '../../../src/db/repositories/teams.js';
import { openTestDatabase, type TestDatabase } from '../../support/database.js';
import { insertManyServices } from '../../support/many-services.js';

// More services than RARE_ENOUGH hold "erp" and "customer", so those searches take the walk.
const CUSTOMERS = RARE_ENOUGH + 50;

describe('serviceIdsNamed', () => {
  let test: TestDatabase;
  let teamId: string;
  let serverId: string;
  const named: { id: string; name: string }[] = [];

  beforeAll(async () => {
    test = await openTestDatabase(undefined, 'name-search');
    const db = test.db.kysely;
    teamId = await insertTeam(db, { name: 'Search', plan: 'business', timezone: 'UTC' });
    serverId = await insertServer(db, { teamId, name: 'host' });
    const add = async (name: string) => named.push({ id: await insertService(db, { teamId, serverId, name }), name });
    for (let i = 1; i <= CUSTOMERS; i++) await add(`Customer ${i} ERP`);
    for (const name of ['50% off', 'a_b shop', 'Café Lumière', 'ACME Production']) await add(name);
    // Never found: a copy, a deleted service, another team's service of the same name.
    await insertService(db, { teamId, serverId, name: 'Customer 17 ERP', parentId: named[16]!.id });
    const deleted = await insertService(db, { teamId, serverId, name: 'Customer 17 ERP deleted' });
    await db.updateTable('erp_services').set({ deleted_at: nowIso() }).where('id', '=', deleted).execute();
    const otherTeam = await insertTeam(db, { name: 'Other', plan: 'business', timezone: 'UTC' });
    await insertService(db, { teamId: otherTeam, serverId: await insertServer(db, { teamId: otherTeam, name: 'h' }), name: 'Customer 17 ERP' });
  }, 120_000);
  afterAll(async () => { await test?.close(); });

  /** What a search must find: every live service of the team whose name holds it, ignoring ASCII case, in id order. */
  const expected = (search: string) => named.filter((service) => service.name.toLowerCase().includes(search.toLowerCase()))
    .map((service) => service.id).sort();
  const byName = (...names: string[]) => names.map((name) => named.find((service) => service.name === name)!.id).sort();

  /** The ids a search finds; in a team this small, every walk reads all of its names. */
  async function idsNamed(by: Omit<NameSearch, 'teamId'>): Promise<string[]> {
    const found = await serviceIdsNamed(test.db.kysely, { teamId, ...by });
    expect(found.searchedTo).toBeUndefined();
    return found.services;
  }

  /** Every page of a search, `limit` at a time. */
  async function allPages(search: string, limit: number): Promise<string[]> {
    const found: string[] = [];
    for (;;) {
      const page = await idsNamed({ search, afterId: found.at(-1), limit });
      found.push(...page);
      if (page.length < limit) return found;
    }
  }

  it('finds one service among many by its whole name, from the rarest piece', async () => {
    expect(await idsNamed({ search: 'Customer 17 ERP', limit: 20 })).toEqual(byName('Customer 17 ERP'));
    expect(await idsNamed({ search: 'customer 201 erp', limit: 20 })).toEqual(byName('Customer 201 ERP'));
  });

  for (const search of ['ERP', 'customer', 'er 1', 'r 2', '17', 'e', '5', 'Customer 1', 'tomer 10', 'acme', 'PRODUCTION', 'é L', 'Lumière']) {
    it(`finds exactly the services holding "${search}", page after page`, async () => {
      const wanted = expected(search);
      expect(await allPages(search, 20)).toEqual(wanted);
      expect(await allPages(search, 7)).toEqual(wanted);
    });
  }

  it('finds nothing for a piece no name holds, and reads the wildcards a person types as themselves', async () => {
    expect(await idsNamed({ search: 'Customer 17 ERQ', limit: 20 })).toEqual([]);
    expect(await idsNamed({ search: 'zzz', limit: 20 })).toEqual([]);
    expect(await idsNamed({ search: '50%', limit: 20 })).toEqual(byName('50% off'));
    expect(await idsNamed({ search: '%', limit: 20 })).toEqual(byName('50% off'));
    expect(await idsNamed({ search: 'a_b', limit: 20 })).toEqual(byName('a_b shop'));
  });

  it('leaves out the services a form already shows', async () => {
    const shown = byName('Customer 17 ERP', 'Customer 170 ERP');
    expect(await idsNamed({ search: 'Customer 17', excluding: shown, limit: 20 }))
      .toEqual(expected('Customer 17').filter((id) => !shown.includes(id)));
  });

  it('finds a service written by hand once its name is indexed, as schema.sql does for the services that have none', async () => {
    const db = test.db.kysely;
    const id = newId('svc');
    const now = nowIso();
    await db.insertInto('erp_services').values({
      id, team_id: teamId, server_id: serverId, parent_id: null, name: 'Imported Zebra ERP', state: 'stopped', revision: 1, port: null, pid: null,
      outgoing_smtp: null, mail_username: null, mail_password_hash: null, state_reason: null, created_at: now, updated_at: now, deleted_at: null,
      published_host: null, app: null,
    }).execute();
    expect(await idsNamed({ search: 'Zebra', limit: 20 })).toEqual([]);
    await indexServiceNames(db);
    expect(await idsNamed({ search: 'Zebra', limit: 20 })).toEqual([id]);
  });
});

// Issue 37: a search that no piece serves walks the team's names; one search reads at most
// WALK_LIMIT of them, says where it stopped, and the same search from there goes on.
describe('serviceIdsNamed in a team of more than WALK_LIMIT services', () => {
  let test: TestDatabase;
  let teamId: string;
  let ids: string[];
  const EARLY = 5;
  const LATE = WALK_LIMIT + 100;

  beforeAll(async () => {
    test = await openTestDatabase(undefined, 'name-search-walk');
    const db = test.db.kysely;
    teamId = await insertTeam(db, { name: 'Large', plan: 'business', timezone: 'UTC' });
    const names = Array.from({ length: WALK_LIMIT + 200 }, (_, i) => `Customer ${i + 1} ERP`);
    names[EARLY] = 'Early zq shop';
    names[LATE] = 'Late zq shop';
    ids = await insertManyServices(db, teamId, await insertServer(db, { teamId, name: 'host' }), names);
  }, 120_000);
  afterAll(async () => { await test?.close(); });

  it('reads WALK_LIMIT names and says where it stopped when a search of escaped wildcards that no name holds walks the team', async () => {
    const first = await serviceIdsNamed(test.db.kysely, { teamId, search: '%_', limit: 51 });
    expect(first).toEqual({ services: [], searchedTo: ids[WALK_LIMIT - 1] });
    // The rest of the team is shorter than a walk: this one reaches its end and says nothing more.
    expect(await serviceIdsNamed(test.db.kysely, { teamId, search: '%_', afterId: first.searchedTo, limit: 51 })).toEqual({ services: [] });
  });

  it('finds a rare match beyond the first WALK_LIMIT names by going on from where the walk stopped', async () => {
    const first = await serviceIdsNamed(test.db.kysely, { teamId, search: 'ZQ', limit: 20 });
    expect(first).toEqual({ services: [ids[EARLY]], searchedTo: ids[WALK_LIMIT - 1] });
    expect(await serviceIdsNamed(test.db.kysely, { teamId, search: 'ZQ', afterId: first.searchedTo, limit: 20 })).toEqual({ services: [ids[LATE]] });
  });

  it('does not stop a walk that fills its page, nor a search that starts from a rare piece', async () => {
    expect(await serviceIdsNamed(test.db.kysely, { teamId, search: 'rp', limit: 20 }))
      .toEqual({ services: ids.filter((_, i) => i !== EARLY).slice(0, 20) });
    expect(await serviceIdsNamed(test.db.kysely, { teamId, search: 'late zq', limit: 20 })).toEqual({ services: [ids[LATE]] });
  });
});

describe('piecesOf', () => {
  it('cuts a search into its distinct three-character pieces, by character', () => {
    expect(piecesOf('ab')).toEqual([]);
    expect(piecesOf('erp')).toEqual(['erp']);
    expect(piecesOf('Café L')).toEqual(['Caf', 'afé', 'fé ', 'é L']);
    expect(piecesOf('aaaa')).toEqual(['aaa']);
  });

  it('weighs at most twelve pieces of a long search, spread over it', () => {
    const pieces = piecesOf('abcdefghijklmnopqrstuvwxyz');
    expect(pieces).toHaveLength(12);
    expect(pieces[0]).toBe('abc');
    expect(pieces.at(-1)! > 'stu').toBe(true);
  });
});
