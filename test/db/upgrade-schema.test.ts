// What src/db/upgrade-schema.ts changes on a PostgreSQL database made by an earlier schema.sql
// (the SQLite half is in apply-schema.test.ts): download_links.token_id, once NOT NULL, accepts
// null when the database is opened again, so a link a member asked for in the panel can be kept.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { testEngine, testLocation } from '../support/database.js';

describe.runIf(testEngine() === 'postgres')('the schema upgrade on PostgreSQL', () => {
  it('lets download_links.token_id be null on a database where an earlier schema.sql made it NOT NULL', async () => {
    const location = await testLocation('postgres', 'upgrade');
    try {
      const first = openDatabase(location.dataDir, location.database);
      await first.ready();
      const teamId = await insertTeam(first.kysely, { name: 'Links', plan: 'starter', timezone: 'UTC' });
      const userId = await upsertMember(first.kysely, { teamId, email: 'member@example.com', role: 'member', passwordHash: null });
      await first.kysely.schema.alterTable('download_links').alterColumn('token_id', (column) => column.setNotNull()).execute();
      await first.close();

      const upgraded = openDatabase(location.dataDir, location.database);
      await upgraded.ready();
      await upgraded.kysely.insertInto('download_links').values({
        id_hash: 'member-link', team_id: teamId, token_id: null, user_id: userId, file: '{}', created_at: 'now', expires_at: 'later', used_at: null,
        action: null, target_type: null, target_id: null, channel: 'panel',
      }).execute();
      expect(await upgraded.kysely.selectFrom('download_links').select(['token_id', 'user_id']).execute()).toEqual([{ token_id: null, user_id: userId }]);
      await upgraded.close();
    } finally {
      await location.remove();
    }
  });
});
