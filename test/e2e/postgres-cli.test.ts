// The command line on PostgreSQL: --database-url (or DATABASE_URL) for every command, clear
// refusals of a bad address or pool size, and a restart that changes nothing: schema.sql
// applied again on the same database keeps every table, column and row.
import { rmSync } from 'node:fs';
import { sql } from '../../src/db/kysely-runtime.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/connect.js';
import { admin, runCli, startServe, type ServeProcess } from '../support/cli.js';
import { createTestSchema, type TestSchema } from '../support/database.js';
import { getJson, tempDataDir } from '../support/fixtures.js';
import { killProcessesMatching } from '../engine/support/engine-http.js';

describe('teaminfra on PostgreSQL', () => {
  const dataDir = tempDataDir();
  let schema: TestSchema;
  let db: Db;
  let serve: ServeProcess | undefined;
  beforeAll(async () => {
    schema = await createTestSchema('cli');
    db = openDatabase(tempDataDir(), { url: schema.url, poolSize: 2 });
    await db.ready();
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    // The demo's staging copy runs as its own process, detached from serve on purpose.
    await killProcessesMatching(dataDir);
    rmSync(db.dataDir, { recursive: true, force: true });
    await db.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function dumpEveryTable(db: Db): Promise<Record<string, unknown[]>> {
    const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`.execute(db.kysely);
    const indexes = await sql<{ indexname: string; indexdef: string }>`
      select indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`.execute(db.kysely);
    const dump: Record<string, unknown[]> = { __columns: columns.rows, __indexes: indexes.rows };
    for (const table of new Set(columns.rows.map((row) => row.table_name))) {
      dump[table] = (await sql`select * from ${sql.table(table)} order by 1`.execute(db.kysely)).rows;
    }
    return dump;
  }

  it('admin --database-url writes to PostgreSQL, and DATABASE_URL does the same', async () => {
    const { id } = await admin(dataDir, ['create-team', '--name', 'Postgres team', '--database-url', schema.url]);
    const viaEnv = await runCli(['admin', 'create-team', '--name', 'From the environment'], { env: { DATABASE_URL: schema.url } });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const teams = await db.kysely.selectFrom('teams').select(['id', 'name']).orderBy('id').execute();
    expect(teams).toEqual([{ id, name: 'Postgres team' }, { id: JSON.parse(viaEnv.stdout).id, name: 'From the environment' }]);
  });

  it('refuses an address that is not PostgreSQL, with a sentence and exit code 2', async () => {
    const result = await runCli(['admin', 'create-team', '--name', 'X', '--database-url', 'mysql://localhost/db']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--database-url (or DATABASE_URL) must be a PostgreSQL address such as postgres://');
  });

  it('refuses a pool size that is not a number of connections', async () => {
    const result = await runCli(['admin', 'create-team', '--name', 'X', '--database-url', schema.url], { env: { TEAMINFRA_DB_POOL: 'many' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TEAMINFRA_DB_POOL must be a number of connections from 1 to 1000; got "many".');
  });

  it('serve exits with the address, never the password, when PostgreSQL cannot be reached', async () => {
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--database-url', 'postgres://someone:s3cret-pw@127.0.0.1:1/nothing'],
      { env: { TEAMINFRA_SMTP_PORT: '0' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('serve: cannot use the database (PostgreSQL postgres://someone@127.0.0.1:1/nothing): ');
    expect(result.stderr + result.stdout).not.toContain('s3cret-pw');
  });

  it('keeps every row and the schema as they were across a restart of serve', async () => {
    // An empty database of its own: --demo seeds only an empty one.
    const fresh = await createTestSchema('restart');
    const freshDb = openDatabase(tempDataDir(), { url: fresh.url, poolSize: 2 });
    try {
      await restartKeepsEverything(fresh.url, freshDb);
    } finally {
      rmSync(freshDb.dataDir, { recursive: true, force: true });
      await freshDb.close();
      await fresh.drop();
    }
  });

  async function restartKeepsEverything(url: string, db: Db): Promise<void> {
    serve = await startServe(dataDir, ['--demo', '--database-url', url, '--node', 'only']);
    expect(serve.output()).toContain('Node:          only (database: PostgreSQL postgres://');
    const token = /API token:\s+(tinf_\S+)/.exec(serve.output())?.[1] as string;
    const before = await getJson(serve.baseUrl, '/api/service-erp', token);
    expect(before.status).toBe(200);
    expect(before.body.data.map((service: { name: string }) => service.name)).toEqual(['Production ERP', 'Accounting ERP']);
    expect(await serve.stop()).toBe(0);
    const rowsBefore = await dumpEveryTable(db);

    serve = await startServe(dataDir, ['--demo', '--database-url', url, '--node', 'only']);
    expect(serve.output()).not.toContain('API token:');
    expect((await getJson(serve.baseUrl, '/api/service-erp', token)).body).toEqual(before.body);
    expect(await serve.stop()).toBe(0);
    serve = undefined;

    const rowsAfter = await dumpEveryTable(db);
    // The fan-out of the demo's events (its staging copy's) to webhooks may happen on either side of the restart.
    // The scheduler writes a service's schedule row the first time it sees the service
    // (src/engine/backup-schedule/scheduler.ts): the demo's staging copy, made after the first run's
    // tick, may get its row in the second run. The rows that existed are unchanged.
    const scheduled = new Set(rowsBefore.backup_schedules?.map((row) => (row as { service_id: string }).service_id));
    const withoutLastUsed = (dump: Record<string, unknown[]>) => ({
      ...dump, api_tokens: dump.api_tokens?.map((row) => ({ ...(row as object), last_used_at: null, last_used_channel: null })),
      events: dump.events?.map((row) => ({ ...(row as object), dispatched_at: null })),
      // Each node marks itself seen while it runs (src/engine/node-heartbeat.ts).
      nodes: dump.nodes?.map((row) => ({ ...(row as object), last_seen_at: null })),
      backup_schedules: dump.backup_schedules?.filter((row) => scheduled.has((row as { service_id: string }).service_id)),
    });
    expect(withoutLastUsed(rowsAfter)).toEqual(withoutLastUsed(rowsBefore));
    expect((rowsAfter.__columns ?? []).length).toBeGreaterThan(100);
    expect(rowsAfter.teams).toHaveLength(1);
    expect(rowsAfter.erp_services).toHaveLength(3);
  }
});
