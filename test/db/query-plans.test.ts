// Every list, and the lookups each request makes, read by key: the plan the engine picks for the
// query the repository really sends is held here, so that a change to a query or to the schema
// cannot silently turn a lookup into a walk over a table (or over a whole team). On SQLite the
// plan is EXPLAIN QUERY PLAN; on PostgreSQL it is EXPLAIN with sequential scans discouraged (its
// planner rightly prefers them on tables this small), so a Seq Scan there means no index serves
// the query at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledQuery } from 'kysely';
import { StablePlanSqliteDialect } from '../../src/db/dialect-sqlite.js';
import { Kysely, PostgresDialect } from '../../src/db/kysely-runtime.js';
import pg from 'pg';
import type { Reach } from '../../src/core/principal.js';
import type { Database } from '../../src/db/tables.js';
import { listBackupsOfService } from '../../src/db/repositories/backups.js';
import { listDueSchedules, listFailedScheduledBackups, listRetriesDue } from '../../src/db/repositories/backup-schedules.js';
import {
  deleteAuditBefore, deleteDispatchedEventsBefore, deleteEndedDeliveriesBefore, deleteFinishedOperationsBefore,
} from '../../src/db/repositories/row-retention.js';
import { listEmailsOfCopy } from '../../src/db/repositories/caught-emails.js';
import { countPendingDecisions, findReachableDecision, listOverdueDecisions, listReachableDecisions, listTeamDecisions } from '../../src/db/repositories/decisions.js';
import { findReachableOperation, listReachableOperations } from '../../src/db/repositories/operations.js';
import { findReachableServer, insertServer, listReachableServers } from '../../src/db/repositories/servers.js';
import { findReachableService, insertService, listReachableServices } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { createToken, findTokenWithTeamByHash } from '../../src/db/repositories/tokens.js';
import { hashTokenValue } from '../../src/auth/token-format.js';
import { encodeCursor } from '../../src/db/pagination.js';
import { listEvents } from '../../src/db/repositories/events.js';
import { copiesOfServices, countServicesByState, listServersPage, listTopLevelServicesPage } from '../../src/db/repositories/service-overview.js';
import { choiceNames, knownChoices, tokenChoices } from '../../src/panel/token-choices.js';
import { listActivity } from '../../src/db/repositories/activity.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

const engine = process.env.TEAMINFRA_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

interface Fixture { teamId: string; serverIds: string[]; serviceIds: string[]; copyId: string; listedTokenId: string; teamTokenId: string }

async function seed(db: Kysely<Database>): Promise<Fixture> {
  const teamId = await insertTeam(db, { name: 'Plans', plan: 'business', timezone: 'UTC' });
  const serverIds = [await insertServer(db, { teamId, name: 'a' }), await insertServer(db, { teamId, name: 'b' })];
  const serviceIds: string[] = [];
  for (let i = 0; i < 6; i++) serviceIds.push(await insertService(db, { teamId, serverId: serverIds[i % 2]!, name: `ERP ${i}` }));
  const copyId = await insertService(db, { teamId, serverId: serverIds[0]!, name: 'copy', parentId: serviceIds[0]! });
  const token = (services: string[] | null, servers: string[] | null) => createToken(db, {
    teamId, name: 't', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [], serviceIds: services,
    serverIds: servers, expiresOn: null, createdByUserId: null,
  });
  const listed = await token([serviceIds[0]!, serviceIds[2]!], [serverIds[1]!]);
  const team = await token(null, null);
  return { teamId, serverIds, serviceIds, copyId, listedTokenId: listed.id, teamTokenId: team.id };
}

/** A Kysely on the same database, with the same dialect, that records every query it runs instead of using any fast path. */
function recording(test: TestDatabase): { db: Kysely<Database>; queries: CompiledQuery[]; end(): Promise<void> } {
  const queries: CompiledQuery[] = [];
  const log = (event: { level: string; query: CompiledQuery }) => { if (event.level === 'query') queries.push(event.query); };
  if (test.engine === 'sqlite') {
    const db = new Kysely<Database>({ dialect: new StablePlanSqliteDialect({ database: test.db.sqlite! }), log });
    // Not destroyed: that would close the shared SQLite handle.
    return { db, queries, end: async () => {} };
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: test.url, max: 1 }) }), log });
  return { db, queries, end: () => db.destroy() };
}

/** The plan of each query, one line per step. */
async function plansOf(test: TestDatabase, queries: readonly CompiledQuery[]): Promise<string[][]> {
  if (test.engine === 'sqlite') {
    return queries.map((query) => (test.db.sqlite!.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(...query.parameters as unknown[]) as { detail: string }[])
      .map((row) => row.detail));
  }
  const client = new pg.Client({ connectionString: test.url });
  await client.connect();
  try {
    await client.query('SET enable_seqscan = off');
    const plans: string[][] = [];
    for (const query of queries) {
      const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query.sql}`, query.parameters as unknown[]);
      plans.push(result.rows.map((row) => row['QUERY PLAN'].trim()));
    }
    return plans;
  } finally {
    await client.end();
  }
}

// A token limited to services: the services it reaches (its listed ones, then their copies), read by key.
const REACHED_SERVICES = [
    'COMPOUND QUERY', 'LEFT-MOST SUBQUERY',
    'SEARCH api_token_services USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=?)',
    'UNION ALL',
    'SEARCH l USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=?)',
    'SEARCH c USING COVERING INDEX erp_services_parent_id (parent_id=?)',
  ];

// How many of the team's services hold each piece of a search, each count a range cut at RARE_ENOUGH + 1.
const PIECE_COUNTS = [
  'SCAN CONSTANT ROW', 'SCALAR SUBQUERY 2', 'CO-ROUTINE held',
  'SEARCH service_name_grams USING COVERING INDEX sqlite_autoindex_service_name_grams_1 (team_id=? AND gram=?)', 'SCAN held',
];

describe(`query plans (${engine})`, () => {
  let test: TestDatabase;
  let fixture: Fixture;
  let teamReach: Reach;
  let listedReach: Reach;

  beforeAll(async () => {
    test = await openTestDatabase(undefined, 'plans');
    fixture = await seed(test.db.kysely);
    teamReach = { teamId: fixture.teamId, tokenId: fixture.teamTokenId, restrictServices: false, restrictServers: false };
    listedReach = { teamId: fixture.teamId, tokenId: fixture.listedTokenId, restrictServices: true, restrictServers: true };
  });
  afterAll(async () => { await test.close(); });

  /** Runs `read` against the recording Kysely and answers the plans of the queries it sent. */
  async function plansOfRead(read: (db: Kysely<Database>) => Promise<unknown>): Promise<string[][]> {
    const recorder = recording(test);
    try {
      await read(recorder.db);
    } finally {
      await recorder.end();
    }
    expect(recorder.queries.length).toBeGreaterThan(0);
    return plansOf(test, recorder.queries);
  }

  // A row about an optional service, for a token limited to services (service-reach.ts): its
  // listed services and their copies, each subquery read by key; and, limited to servers, its servers.
  const LISTED_SERVICES_OR_COPIES = [
    'LIST SUBQUERY 1',
    'SEARCH api_token_services USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=?)',
    'CREATE BLOOM FILTER',
    'LIST SUBQUERY 3',
    'SEARCH erp_services USING COVERING INDEX erp_services_parent_id (parent_id=?)',
    'LIST SUBQUERY 2',
    'SEARCH api_token_services USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=?)',
    'CREATE BLOOM FILTER',
  ];
  const LISTED_SERVERS = [
    'LIST SUBQUERY 4',
    'SEARCH api_token_servers USING COVERING INDEX sqlite_autoindex_api_token_servers_1 (token_id=?)',
    'CREATE BLOOM FILTER',
  ];
  // The same, as the only subquery of its statement.
  const LISTED_SERVERS_ALONE = LISTED_SERVERS.map((line) => line.replace('LIST SUBQUERY 4', 'LIST SUBQUERY 1'));
  const cursor = () => encodeCursor(fixture.serviceIds[0]!);
  // Each read, and on SQLite the exact plan it must have: every table reached by key.
  // `sqlite` is the plan of the one query a read sends, or of each when it sends several.
  const reads: { name: string; read: (db: Kysely<Database>) => Promise<unknown>; sqlite: string[] | string[][] }[] = [
    { name: 'the token lookup of every request', read: (db) => findTokenWithTeamByHash(db, hashTokenValue('tinf_x')), sqlite: [
      'SEARCH t USING INDEX sqlite_autoindex_api_tokens_2 (token_hash=?)',
      'SEARCH team USING INDEX sqlite_autoindex_teams_1 (id=?)',
    ] },
    { name: 'services of the whole team', read: (db) => listReachableServices(db, teamReach, { limit: 20 }, null), sqlite: [
      'SEARCH s USING INDEX erp_services_team (team_id=?)',
    ] },
    { name: 'services of the whole team, next page', read: (db) => listReachableServices(db, teamReach, { limit: 20, cursor: cursor() }, null), sqlite: [
      'SEARCH s USING INDEX erp_services_team (team_id=? AND id>?)',
    ] },
    { name: 'listed services', read: (db) => listReachableServices(db, listedReach, { limit: 20 }, null), sqlite: [
      'SEARCH l USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=?)',
      'SEARCH s USING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)',
    ] },
    { name: 'listed services, next page', read: (db) => listReachableServices(db, listedReach, { limit: 20, cursor: cursor() }, null), sqlite: [
      'SEARCH l USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=? AND service_id>?)',
      'SEARCH s USING INDEX sqlite_autoindex_erp_services_1 (id=?)',
    ] },
    { name: 'copies, whole team', read: (db) => listReachableServices(db, teamReach, { limit: 20 }, fixture.serviceIds[0]!), sqlite: [
      'SEARCH s USING INDEX erp_services_parent_id (parent_id=?)',
    ] },
    { name: 'copies, listed services', read: (db) => listReachableServices(db, listedReach, { limit: 20 }, fixture.serviceIds[0]!), sqlite: [
      'SEARCH s USING INDEX erp_services_parent_id (parent_id=?)',
      'SEARCH l EXISTS USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=? AND service_id=?)',
    ] },
    { name: 'one service, listed services', read: (db) => findReachableService(db, listedReach, fixture.copyId), sqlite: [
      'SEARCH s USING INDEX erp_services_team_names (team_id=? AND id=?)',
      'SEARCH l EXISTS USING COVERING INDEX sqlite_autoindex_api_token_services_1 (token_id=? AND service_id=?)',
    ] },
    { name: 'servers of the whole team', read: (db) => listReachableServers(db, teamReach, { limit: 20 }), sqlite: [
      'SEARCH v USING INDEX servers_team (team_id=?)',
    ] },
    { name: 'listed servers', read: (db) => listReachableServers(db, listedReach, { limit: 20 }), sqlite: [
      'SEARCH l USING COVERING INDEX sqlite_autoindex_api_token_servers_1 (token_id=?)',
      'SEARCH v USING INDEX servers_team (team_id=? AND id=?)',
    ] },
    { name: 'one server, listed servers', read: (db) => findReachableServer(db, listedReach, fixture.serverIds[1]!), sqlite: [
      'SEARCH l EXISTS USING COVERING INDEX sqlite_autoindex_api_token_servers_1 (token_id=? AND server_id=?)',
      'SEARCH v USING INDEX servers_team (team_id=? AND id=?)',
    ] },
    { name: 'operations of the whole team', read: (db) => listReachableOperations(db, teamReach, { limit: 20 }), sqlite: [
      'SEARCH o USING INDEX operations_team (team_id=?)',
    ] },
    { name: 'operations a token requested itself', read: (db) => listReachableOperations(db, { ...listedReach, requestedOnly: true }, { limit: 20 }), sqlite: [
      'SEARCH o USING INDEX operations_requester (team_id=? AND requested_by_token_id=?)',
    ] },
    { name: 'operations, listed servers only', read: (db) => listReachableOperations(db, { ...listedReach, restrictServices: false }, { limit: 20 }), sqlite: [
      'SEARCH o USING INDEX operations_team (team_id=?)',
      ...LISTED_SERVERS_ALONE,
    ] },
    // Three ranges, each read up to the page: the token's own requests, the operations about no
    // service (on a listed server), and those of the services it reaches.
    { name: 'operations, listed services and servers', read: (db) => listReachableOperations(db, listedReach, { limit: 20 }), sqlite: [
      REACHED_SERVICES,
      ['SEARCH o USING INDEX operations_requester (team_id=? AND requested_by_token_id=?)'],
      ['SEARCH o USING INDEX operations_team_service (team_id=? AND service_id=?)', ...LISTED_SERVERS_ALONE],
      ['SEARCH o USING INDEX operations_team_service (team_id=? AND service_id=?)', 'USE TEMP B-TREE FOR ORDER BY'],
    ] },
    { name: 'operations, listed services and servers, next page', read: (db) => listReachableOperations(db, listedReach, { limit: 20, cursor: encodeCursor('op_00000000000000000000') }), sqlite: [
      REACHED_SERVICES,
      ['SEARCH o USING INDEX operations_requester (team_id=? AND requested_by_token_id=? AND id>?)'],
      ['SEARCH o USING INDEX operations_team_service (team_id=? AND service_id=? AND id>?)', ...LISTED_SERVERS_ALONE],
      ['SEARCH o USING INDEX operations_team_service (team_id=? AND service_id=? AND id>?)', 'USE TEMP B-TREE FOR ORDER BY'],
    ] },
    { name: 'one operation', read: (db) => findReachableOperation(db, listedReach, 'op_00000000000000000000'), sqlite: [
      'SEARCH o USING INDEX sqlite_autoindex_operations_1 (id=?)',
      ...LISTED_SERVICES_OR_COPIES,
      ...LISTED_SERVERS,
    ] },
    { name: 'events of a team', read: (db) => listEvents(db, fixture.teamId, { afterId: 'evt_00000000000000000000' }), sqlite: [
      'SEARCH events USING INDEX events_team (team_id=? AND id>?)',
    ] },
    // The panel's Overview (issue 28): a page of services, their copies, the counts per state, a page of servers.
    { name: 'the overview\'s page of services', read: (db) => listTopLevelServicesPage(db, fixture.teamId, { search: '', limit: 50 }), sqlite: [
      'SEARCH s USING INDEX erp_services_team (team_id=?)', 'SEARCH v USING INDEX sqlite_autoindex_servers_1 (id=?) LEFT-JOIN',
    ] },
    // A search by name: how many services hold each of its three-character pieces (each count
    // one bounded range), the services holding the rarest, then those by key.
    { name: 'the overview\'s search by name', read: (db) => listTopLevelServicesPage(db, fixture.teamId, { search: 'erp', limit: 50, afterId: fixture.serviceIds[0] }), sqlite: [
      PIECE_COUNTS,
      ['SEARCH service_name_grams USING COVERING INDEX sqlite_autoindex_service_name_grams_1 (team_id=? AND gram=?)'],
      ['SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)'],
      ['SEARCH s USING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)', 'SEARCH v USING INDEX sqlite_autoindex_servers_1 (id=?) LEFT-JOIN'],
    ] },
    // Shorter than a piece: the walk of at most WALK_LIMIT of the team's names, one range of the
    // index, that meets a page of common matches early; here it does not fill the page, so the
    // same range is read again for how far the walk got (service-name-search.ts).
    { name: 'the overview\'s search by two characters', read: (db) => listTopLevelServicesPage(db, fixture.teamId, { search: 'rp', limit: 50 }), sqlite: [
      ['CO-ROUTINE walked', 'SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=?)', 'SCAN walked'],
      ['CO-ROUTINE walked', 'SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=?)', 'SCAN walked'],
      ['SEARCH s USING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)', 'SEARCH v USING INDEX sqlite_autoindex_servers_1 (id=?) LEFT-JOIN'],
    ] },
    { name: 'the overview\'s copies of a page', read: (db) => copiesOfServices(db, fixture.serviceIds, 10), sqlite: [
      'SEARCH s USING INDEX erp_services_parent_id (parent_id=?)', 'SEARCH v USING INDEX sqlite_autoindex_servers_1 (id=?) LEFT-JOIN',
    ] },
    { name: 'the overview\'s counts per state', read: (db) => countServicesByState(db, fixture.teamId), sqlite: [
      'SEARCH erp_services USING COVERING INDEX erp_services_team_state (team_id=? AND deleted_at=?)',
    ] },
    { name: 'the overview\'s page of servers', read: (db) => listServersPage(db, fixture.teamId, { limit: 50 }), sqlite: [
      'SEARCH servers USING INDEX servers_team (team_id=?)',
    ] },
    // The token forms: chosen services and servers by key, then the first matches of each search.
    { name: 'a token form\'s choices', read: (db) => tokenChoices(db, fixture.teamId, {
      services: fixture.serviceIds.slice(0, 2), service_search: 'erp', servers: [fixture.serverIds[0]!], server_search: 'a',
    }), sqlite: [
      ['SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)'],
      PIECE_COUNTS,
      ['SEARCH servers USING INDEX sqlite_autoindex_servers_1 (id=?)'],
      ['SEARCH servers USING INDEX servers_team (team_id=?)'],
      ['SEARCH erp_services USING INDEX erp_services_parent_id (parent_id=?)'],
      ['SEARCH service_name_grams USING COVERING INDEX sqlite_autoindex_service_name_grams_1 (team_id=? AND gram=?)'],
      ['SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)'],
      ['SEARCH erp_services USING INDEX erp_services_parent_id (parent_id=?)'],
    ] },
    { name: 'the ids a token form sent', read: (db) => knownChoices(db, fixture.teamId, { services: fixture.serviceIds.slice(0, 2), servers: fixture.serverIds }), sqlite: [
      ['SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=? AND id=? AND parent_id=? AND deleted_at=?)'],
      ['SEARCH servers USING INDEX servers_team (team_id=? AND id=?)'],
    ] },
    { name: 'the names the API Tokens list shows', read: (db) => choiceNames(db, fixture.teamId, fixture.serviceIds.slice(0, 2), fixture.serverIds), sqlite: [
      ['SEARCH erp_services USING COVERING INDEX erp_services_team_names (team_id=? AND id=?)'],
      ['SEARCH servers USING INDEX servers_team (team_id=? AND id=?)'],
    ] },
    { name: 'backups of a service', read: (db) => listBackupsOfService(db, fixture.serviceIds[0]!, { limit: 20 }), sqlite: [
      'SEARCH b USING INDEX backups_service (service_id=?)',
    ] },
    { name: 'emails of a copy', read: (db) => listEmailsOfCopy(db, fixture.copyId, { limit: 20 }), sqlite: [
      'SEARCH e USING INDEX caught_emails_copy (copy_id=?)',
    ] },
    { name: 'decisions of the whole team', read: (db) => listReachableDecisions(db, teamReach, { limit: 20 }), sqlite: [
      'SEARCH d USING INDEX decisions_team (team_id=?)',
    ] },
    // A decision about no service, or one the token asked, is in reach too: three ranges, as for
    // operations. Pending ones not yet expired (the state as read) are few: the first two ranges
    // take them by state and expiry, then sort them.
    { name: 'pending decisions, listed services', read: (db) => listReachableDecisions(db, listedReach, { limit: 20 }, 'pending'), sqlite: [
      REACHED_SERVICES,
      ['SEARCH d USING INDEX decisions_team_state (team_id=? AND state=? AND expires_at>?)', 'USE TEMP B-TREE FOR ORDER BY'],
      ['SEARCH d USING INDEX decisions_team_state (team_id=? AND state=? AND expires_at>?)', 'USE TEMP B-TREE FOR ORDER BY'],
      ['SEARCH d USING INDEX decisions_team_service (team_id=? AND service_id=?)', 'USE TEMP B-TREE FOR ORDER BY'],
    ] },
    { name: 'decisions, listed services, next page', read: (db) => listReachableDecisions(db, listedReach, { limit: 20, cursor: encodeCursor('dec_00000000000000000000') }), sqlite: [
      REACHED_SERVICES,
      ['SEARCH d USING INDEX decisions_asker (team_id=? AND asked_by_token_id=? AND id>?)'],
      ['SEARCH d USING INDEX decisions_team_service (team_id=? AND service_id=? AND id>?)'],
      ['SEARCH d USING INDEX decisions_team_service (team_id=? AND service_id=? AND id>?)', 'USE TEMP B-TREE FOR ORDER BY'],
    ] },
    { name: 'one decision, listed services', read: (db) => findReachableDecision(db, listedReach, 'dec_00000000000000000000'), sqlite: [
      'SEARCH d USING INDEX sqlite_autoindex_decisions_1 (id=?)',
      ...LISTED_SERVICES_OR_COPIES,
    ] },
    // The history is sorted by when each decision ended: the team's ended decisions, no one else's.
    { name: 'the panel\'s decisions (pending, then history)', read: (db) => listTeamDecisions(db, fixture.teamId, 50), sqlite: [
      ['SEARCH decisions USING INDEX decisions_team (team_id=?)'],
      ['SEARCH decisions USING INDEX decisions_team (team_id=?)', 'USE TEMP B-TREE FOR ORDER BY'],
    ] },
    { name: 'the overview\'s pending count', read: (db) => countPendingDecisions(db, fixture.teamId, '2026-01-01T00:00:00.000Z'), sqlite: [
      'SEARCH decisions USING COVERING INDEX decisions_team_state (team_id=? AND state=? AND expires_at>?)',
    ] },
    // The scheduler's due slots and retries, every team's: a range of slot times (each service's server by key: none of a lost one).
    { name: 'due backup slots', read: (db) => listDueSchedules(db, '2026-01-01T00:00:00.000Z', 100), sqlite: [
      'SEARCH b USING INDEX backup_schedules_due (next_run_at<?)',
      'SEARCH s USING INDEX sqlite_autoindex_erp_services_1 (id=?)',
      'SEARCH v USING INDEX sqlite_autoindex_servers_1 (id=?)',
      'SEARCH t USING INDEX sqlite_autoindex_teams_1 (id=?)',
    ] },
    { name: 'scheduled backups due a second look', read: (db) => listRetriesDue(db, '2026-01-01T00:00:00.000Z', 100), sqlite: [
      'SEARCH b USING INDEX backup_schedules_retry (retry_at<?)',
      'SEARCH s USING INDEX sqlite_autoindex_erp_services_1 (id=?)',
      'SEARCH v USING INDEX sqlite_autoindex_servers_1 (id=?)',
      'SEARCH k USING INDEX sqlite_autoindex_backups_1 (id=?) LEFT-JOIN',
    ] },
    { name: 'failed scheduled backups of a service', read: (db) => listFailedScheduledBackups(db, fixture.serviceIds[0]!, 5), sqlite: [
      'SEARCH backups USING INDEX backups_service_kind (service_id=? AND kind=?)',
    ] },
    // Row retention's batches: each the oldest rows of a range, however many there are to keep.
    { name: 'a batch of old audit entries', read: (db) => deleteAuditBefore(db, '2026-01-01T00:00:00.000Z', 500), sqlite: [
      'SEARCH audit_log USING COVERING INDEX sqlite_autoindex_audit_log_1 (id=?)',
      'LIST SUBQUERY 1',
      'SEARCH audit_log USING INDEX audit_log_at (at<?)',
    ] },
    { name: 'a batch of ended webhook deliveries', read: (db) => deleteEndedDeliveriesBefore(db, '2026-01-01T00:00:00.000Z', 500), sqlite: [
      'SEARCH webhook_deliveries USING INDEX webhook_deliveries_ended (state=? AND updated_at<?)',
    ] },
    { name: 'a batch of delivered events', read: (db) => deleteDispatchedEventsBefore(db, '2026-01-01T00:00:00.000Z', 500), sqlite: [
      'SEARCH e USING COVERING INDEX events_undispatched (dispatched_at<?)',
      'CORRELATED SCALAR SUBQUERY 1',
      'SEARCH d USING INDEX webhook_deliveries_event (event_id=?)',
    ] },
    { name: 'a batch of finished operations', read: (db) => deleteFinishedOperationsBefore(db, '2026-01-01T00:00:00.000Z', 500), sqlite: [
      'SEARCH o USING INDEX operations_finished (finished_at<?)',
      'CORRELATED SCALAR SUBQUERY 1',
      'SEARCH later USING COVERING INDEX operations_team_service (team_id=? AND service_id=? AND id>?)',
      'CORRELATED SCALAR SUBQUERY 2',
      'SEARCH b USING INDEX backups_operation (operation_id=?)',
      'CORRELATED SCALAR SUBQUERY 3',
      'SEARCH d USING INDEX decisions_operation (operation_id=?)',
    ] },
    // Every team's, and only the overdue pending ones: few, so sorting them is cheap.
    { name: 'overdue decisions, for the sweeper', read: (db) => listOverdueDecisions(db, '2026-01-01T00:00:00.000Z', 100), sqlite: [
      'SEARCH decisions USING INDEX decisions_pending (state=? AND expires_at<?)',
      'USE TEMP B-TREE FOR ORDER BY',
    ] },
  ];

  for (const { name, read, sqlite } of reads) {
    it(`reads ${name} by key`, async () => {
      const plans = await plansOfRead(read);
      if (test.engine === 'sqlite') {
        expect(plans).toEqual(Array.isArray(sqlite[0]) ? sqlite : [sqlite]);
      } else {
        const lines = plans.flat();
        expect(lines.filter((line) => /Seq Scan/.test(line)), lines.join('\n')).toEqual([]);
      }
    });
  }
});

// The activity trail (issue 24) on a team with a million audit rows: every filter a token can
// give, alone and together, with and without a cursor and a time range, and a token limited to
// services or servers, reads one index range per page (or one per reached service or server),
// newest first, never the team's rows one by one. The million rows are written by the database
// itself (a recursive CTE on SQLite, generate_series on PostgreSQL), so that seeding is seconds:
// four in five are the team's, the rest another team's; one in twenty is the fixture's token's,
// the others nineteen other tokens' but for ten rows of a token that rarely acts; six services;
// three actions; one in fifty denied.
describe(`query plans of the activity trail, a million audit rows (${engine})`, () => {
  let test: TestDatabase;
  let fixture: Fixture;
  let teamReach: Reach;
  let listedReach: Reach;
  const ROWS = 1_000_000;

  beforeAll(async () => {
    test = await openTestDatabase(undefined, 'activity-plans');
    fixture = await seed(test.db.kysely);
    teamReach = { teamId: fixture.teamId, tokenId: fixture.teamTokenId, restrictServices: false, restrictServers: false };
    listedReach = { teamId: fixture.teamId, tokenId: fixture.listedTokenId, restrictServices: true, restrictServers: true };
    // Ids as newId() makes them: 'aud_', 9 base36 digits of a millisecond, then 11 more; one a millisecond from 2026-01-01.
    const start = Date.parse('2026-01-01T00:00:00Z');
    const services = fixture.serviceIds;
    if (test.engine === 'sqlite') {
      const sqlite = test.db.sqlite!;
      sqlite.function('base36', (value: number) => value.toString(36).padStart(9, '0'));
      sqlite.prepare(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
        INSERT INTO audit_log (id, team_id, at, actor_type, actor_id, channel, action, target_type, target_id, outcome, code)
        SELECT 'aud_' || base36(? + i) || printf('%011d', i), CASE i % 5 WHEN 4 THEN 'team_other' ELSE ? END,
          strftime('%Y-%m-%dT%H:%M:%fZ', (? + i) / 1000.0, 'unixepoch'),
          'token', CASE WHEN i % 100000 = 7 THEN ? WHEN i % 20 = 0 THEN ? ELSE 'tok_' || printf('%020d', i % 20) END, CASE i % 2 WHEN 0 THEN 'api' ELSE 'mcp' END,
          CASE i % 3 WHEN 0 THEN 'start_erp_service' WHEN 1 THEN 'stop_erp_service' ELSE 'create_backup' END,
          'service', CASE i % 6 ${services.map((id, index) => `WHEN ${index} THEN '${id}'`).join(' ')} END,
          CASE WHEN i % 50 = 0 THEN 'denied' ELSE 'allowed' END, CASE WHEN i % 50 = 0 THEN 'missing_permission' END
        FROM n`).run(ROWS, start, fixture.teamId, start, fixture.listedTokenId, fixture.teamTokenId);
    } else {
      const client = new pg.Client({ connectionString: test.url });
      await client.connect();
      try {
        await client.query(`CREATE FUNCTION pg_temp.base36(value bigint) RETURNS text AS $$
          WITH RECURSIVE d(v, s) AS (SELECT value, '' UNION ALL SELECT v / 36, substr('0123456789abcdefghijklmnopqrstuvwxyz', (v % 36)::int + 1, 1) || s FROM d WHERE v > 0)
          SELECT lpad(s, 9, '0') FROM d WHERE v = 0 $$ LANGUAGE sql IMMUTABLE`);
        await client.query(`INSERT INTO audit_log (id, team_id, at, actor_type, actor_id, channel, action, target_type, target_id, outcome, code)
          SELECT 'aud_' || pg_temp.base36($2::bigint + i) || lpad(i::text, 11, '0'), CASE i % 5 WHEN 4 THEN 'team_other' ELSE $3 END,
            to_char(to_timestamp(($2::bigint + i) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'token', CASE WHEN i % 100000 = 7 THEN $6 WHEN i % 20 = 0 THEN $4 ELSE 'tok_' || lpad((i % 20)::text, 20, '0') END,
            CASE i % 2 WHEN 0 THEN 'api' ELSE 'mcp' END,
            CASE i % 3 WHEN 0 THEN 'start_erp_service' WHEN 1 THEN 'stop_erp_service' ELSE 'create_backup' END,
            'service', ($5::text[])[i % 6 + 1],
            CASE WHEN i % 50 = 0 THEN 'denied' ELSE 'allowed' END, CASE WHEN i % 50 = 0 THEN 'missing_permission' END
          FROM generate_series(0, $1::int - 1) AS i`, [ROWS, start, fixture.teamId, fixture.teamTokenId, services, fixture.listedTokenId]);
        await client.query('ANALYZE audit_log');
      } finally {
        await client.end();
      }
    }
  }, 600_000);
  afterAll(async () => { await test?.close(); });

  async function plansOfActivity(read: (db: Kysely<Database>) => Promise<unknown>): Promise<string[][]> {
    const recorder = recording(test);
    try {
      await read(recorder.db);
    } finally {
      await recorder.end();
    }
    return plansOf(test, recorder.queries);
  }

  const page = { limit: 50 };
  const cursor = () => ({ limit: 50, cursor: encodeCursor('aud_0mjuq4xk000000500000') });
  const since = '2026-01-01T00:05:00.000Z';
  const until = '2026-01-01T00:10:00.000Z';
  // The token's and target's joins, by key, on every read.
  const JOINS = ['SEARCH t USING INDEX sqlite_autoindex_api_tokens_1 (id=?) LEFT-JOIN', 'SEARCH u USING INDEX sqlite_autoindex_users_1 (id=?) LEFT-JOIN'];
  const REACHED_SERVERS = ['SEARCH api_token_servers USING COVERING INDEX sqlite_autoindex_api_token_servers_1 (token_id=?)'];
  const reads: { name: string; read: (db: Kysely<Database>) => Promise<unknown>; sqlite: string[][]; several?: true; pg?: RegExp }[] = [
    { name: 'the whole team', read: (db) => listActivity(db, teamReach, {}, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_team_id (team_id=?)', ...JOINS],
    ] },
    { name: 'the whole team, next page, in a time range', read: (db) => listActivity(db, teamReach, { since, until }, cursor()), sqlite: [
      ['SEARCH a USING INDEX audit_log_team_id (team_id=? AND id>? AND id<?)', ...JOINS],
    ] },
    { name: 'one token', read: (db) => listActivity(db, teamReach, { tokenId: fixture.teamTokenId }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_actor (team_id=? AND actor_id=?)', ...JOINS],
    ] },
    // Given both ends of a time range, SQLite rather reads the team's rows between them: a range still.
    { several: true, name: 'one token, every other filter, next page', read: (db) => listActivity(db, teamReach,
      { tokenId: fixture.teamTokenId, action: 'stop_erp_service', outcome: 'denied', since, until }, cursor()), sqlite: [
      ['SEARCH a USING INDEX audit_log_team_id (team_id=? AND id>? AND id<?)', ...JOINS],
    ] },
    { several: true, name: 'one token, every other filter, since a time', read: (db) => listActivity(db, teamReach,
      { tokenId: fixture.teamTokenId, action: 'stop_erp_service', outcome: 'denied', since }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_actor (team_id=? AND actor_id=? AND id>?)', ...JOINS],
    ] },
    { name: 'a token that rarely acts', pg: /^audit_log_actor$/, read: (db) => listActivity(db, teamReach, { tokenId: fixture.listedTokenId }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_actor (team_id=? AND actor_id=?)', ...JOINS],
    ] },
    { name: 'one service', read: (db) => listActivity(db, teamReach, { serviceId: fixture.serviceIds[1] }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_target (team_id=? AND target_type=? AND target_id=?)', ...JOINS],
    ] },
    { several: true, name: 'one service and token, action, outcome, time', read: (db) => listActivity(db, teamReach,
      { serviceId: fixture.serviceIds[1], tokenId: fixture.teamTokenId, action: 'start_erp_service', outcome: 'allowed', since }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_target (team_id=? AND target_type=? AND target_id=? AND id>?)', ...JOINS],
    ] },
    { name: 'one action', read: (db) => listActivity(db, teamReach, { action: 'create_backup' }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_action (team_id=? AND action=?)', ...JOINS],
    ] },
    { several: true, name: 'one action and outcome, in a time range', read: (db) => listActivity(db, teamReach, { action: 'create_backup', outcome: 'denied', until }, page), sqlite: [
      ['SEARCH a USING INDEX audit_log_action (team_id=? AND action=? AND id<?)', ...JOINS],
    ] },
    { name: 'one outcome', read: (db) => listActivity(db, teamReach, { outcome: 'denied' }, cursor()), sqlite: [
      ['SEARCH a USING INDEX audit_log_outcome (team_id=? AND outcome=? AND id<?)', ...JOINS],
    ] },
    // Limited to two services (one with a copy) and a server: one range per reached thing.
    { name: 'a token limited to services and servers', read: (db) => listActivity(db, listedReach, {}, page), sqlite: [
      REACHED_SERVICES,
      REACHED_SERVERS,
      ...[0, 1, 2, 3].map(() => ['SEARCH a USING INDEX audit_log_target (team_id=? AND target_type=? AND target_id=?)', ...JOINS]),
    ] },
    { several: true, name: 'a token limited to services and servers, filtered by token and outcome', read: (db) => listActivity(db, listedReach,
      { tokenId: fixture.teamTokenId, outcome: 'denied', since }, cursor()), sqlite: [
      REACHED_SERVICES,
      REACHED_SERVERS,
      ...[0, 1, 2, 3].map(() => ['SEARCH a USING INDEX audit_log_target (team_id=? AND target_type=? AND target_id=? AND id>? AND id<?)', ...JOINS]),
    ] },
  ];

  for (const { name, read, sqlite, several, pg: pgIndex } of reads) {
    it(`reads the activity of ${name} by index range`, async () => {
      const plans = await plansOfActivity(read);
      if (test.engine === 'sqlite') {
        expect(plans).toEqual(sqlite);
      } else {
        // PostgreSQL, with the statistics ANALYZE took: audit_log is read only through an index
        // range of its own (team_id first). Given several filters, it may judge the rows that
        // pass them so few that it reads the driving range by bitmap and sorts what passed,
        // rather than walking it backward up to the page; one filter or none, it walks backward.
        const lines = plans.flat();
        const text = lines.join('\n');
        expect(lines.filter((line) => /Seq Scan/.test(line)), text).toEqual([]);
        // Where the rows that pass are dense (a twentieth of the table and more), PostgreSQL may
        // rather walk the primary key backward (ids in order, as the rows lie on disk) up to the
        // page, checking each row: it expects to read a few pages' worth. Where they are rare,
        // where that walk would read the table to fill a page, it takes the filter's own range.
        const index = /(?:Index Scan Backward using|Bitmap Index Scan on) (audit_log_\w+)/.exec(text)?.[1];
        expect(index, text).toMatch(pgIndex ?? /^audit_log_\w+$/);
        if (!several) expect(lines.filter((line) => /Sort/.test(line)), text).toEqual([]);
      }
    });
  }
});
