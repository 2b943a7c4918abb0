// listReachableDecisions against a real database (SQLite, and PostgreSQL when configured): page by
// page, with and without a state, a token limited to services gets exactly the decisions it
// asked, those about no service and those about the services it reaches (copies included), in
// id order, whichever index range each came from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reach } from '../../../src/core/principal.js';
import { newId } from '../../../src/db/ids.js';
import { encodeCursor } from '../../../src/db/pagination.js';
import { insertDecision, listReachableDecisions } from '../../../src/db/repositories/decisions.js';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { insertTeam } from '../../../src/db/repositories/teams.js';
import { createToken } from '../../../src/db/repositories/tokens.js';
import type { DecisionState } from '../../../src/db/tables.js';
import { openTestDatabase, type TestDatabase } from '../../support/database.js';

interface Row { id: string; serviceId: string | null; tokenId: string; state: DecisionState }
const STATES: DecisionState[] = ['pending', 'answered', 'expired', 'cancelled'];

describe('listReachableDecisions', () => {
  let test: TestDatabase;
  let reach: Reach;
  let rows: Row[];
  let reached: Set<string>;

  beforeAll(async () => {
    test = await openTestDatabase(undefined, 'reachable-decisions');
    const db = test.db.kysely;
    const teamId = await insertTeam(db, { name: 'Decisions', plan: 'business', timezone: 'UTC' });
    const serverId = await insertServer(db, { teamId, name: 'a' });
    const services: string[] = [];
    for (let i = 0; i < 6; i++) services.push(await insertService(db, { teamId, serverId, name: `s${i}` }));
    const copy = await insertService(db, { teamId, serverId, name: 'copy', parentId: services[2]! });
    const token = async (serviceIds: string[] | null) => (await createToken(db, {
      teamId, name: 't', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [], serviceIds, serverIds: null, expiresOn: null, createdByUserId: null,
    })).id;
    const listed = await token([services[2]!, services[5]!]);
    const other = await token(null);
    reach = { teamId, tokenId: listed, restrictServices: true, restrictServers: false };
    reached = new Set([services[2]!, services[5]!, copy]);
    rows = [];
    for (let i = 0; i < 120; i++) {
      const row: Row = {
        id: newId('dec'), serviceId: i % 5 === 0 ? null : i % 5 === 1 ? copy : services[i % 6]!,
        tokenId: i % 9 === 0 ? listed : other, state: STATES[i % 4]!,
      };
      rows.push(row);
      await insertDecision(db, {
        id: row.id, team_id: teamId, asked_by_token_id: row.tokenId, asked_channel: 'api', service_id: row.serviceId, operation_id: null,
        question: 'q', context: null, options: null, state: row.state, answer: null, answered_by_type: null, answered_by_id: null,
        answered_channel: null, answered_at: null, created_at: new Date().toISOString(), expires_at: '2999-01-01T00:00:00.000Z',
      });
    }
  });
  afterAll(async () => { await test.close(); });

  async function everyPage(limit: number, state?: DecisionState): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listReachableDecisions(test.db.kysely, reach, { limit, cursor }, state);
      const shown = page.slice(0, limit).map((row) => row.id);
      ids.push(...shown);
      if (page.length <= limit) return ids;
      cursor = encodeCursor(shown.at(-1)!);
    }
  }

  const inReach = (row: Row) => row.tokenId === reach.tokenId || row.serviceId === null || reached.has(row.serviceId);

  for (const state of [undefined, 'pending', 'answered'] as const) {
    it(`pages exactly through the reached decisions${state ? ` that are ${state}` : ''} of a token limited to services`, async () => {
      const want = rows.filter((row) => inReach(row) && (!state || row.state === state)).map((row) => row.id).sort();
      expect(want.length).toBeGreaterThan(5);
      for (const limit of [1, 4, 50]) expect(await everyPage(limit, state)).toEqual(want);
    });
  }
});
