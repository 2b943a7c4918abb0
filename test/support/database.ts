// Which database a test runs on. SQLite always; PostgreSQL too when TEAMINFRA_TEST_DATABASE_URL
// names a database the tests may create schemas in (.ci/run starts one). vitest.config.ts runs
// the suites meant for both engines a second time, as the project "postgres", with
// TEAMINFRA_TEST_ENGINE=postgres. On PostgreSQL every test database is a fresh schema of its
// own, so test files running in parallel never see each other's rows; dropping it cleans up.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Db } from '../../src/db/connect.js';

export type TestEngine = 'sqlite' | 'postgres';

/** The PostgreSQL database tests may use, or undefined when there is none. */
export const TEST_DATABASE_URL: string | undefined = process.env.TEAMINFRA_TEST_DATABASE_URL || undefined;

/** PostgreSQL connections per app in tests: enough for concurrency, few enough for many apps at once. */
export const TEST_POOL_SIZE = 4;

/** The engine of the current vitest project. */
export function testEngine(): TestEngine {
  return process.env.TEAMINFRA_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
}

export interface TestSchema {
  name: string;
  /** The test database's URL with this schema first on the search path. */
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty schema in the test database; drop() removes it with everything in it. */
export async function createTestSchema(label = 'test'): Promise<TestSchema> {
  if (!TEST_DATABASE_URL) throw new Error('TEAMINFRA_TEST_DATABASE_URL is not set: there is no PostgreSQL to test against.');
  const name = `t_${label.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 24)}_${randomBytes(5).toString('hex')}`;
  await runAsAdmin(`CREATE SCHEMA ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  // Commits without waiting for the disk: a test database is thrown away anyway, and hundreds
  // of seeded rows per suite would otherwise each wait for an fsync.
  url.searchParams.set('options', `-c search_path=${name} -c synchronous_commit=off`);
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await runAsAdmin(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    },
  };
}

async function runAsAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Where an app under test keeps its data: a temp directory, and a fresh schema on PostgreSQL. */
export interface TestLocation {
  engine: TestEngine;
  dataDir: string;
  /** For AppConfig.database / openDatabase; undefined on SQLite. */
  database: { url: string; poolSize: number } | undefined;
  /** Drops the schema and removes the directory. */
  remove(): Promise<void>;
}

export async function testLocation(engine: TestEngine = testEngine(), label = 'db'): Promise<TestLocation> {
  const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-test-'));
  const schema = engine === 'postgres' ? await createTestSchema(label) : undefined;
  return {
    engine, dataDir,
    database: schema ? { url: schema.url, poolSize: TEST_POOL_SIZE } : undefined,
    async remove() {
      await schema?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestDatabase {
  db: Db;
  engine: TestEngine;
  dataDir: string;
  /** The URL of its schema, on PostgreSQL. */
  url: string | undefined;
  close(): Promise<void>;
}

/** An empty database of the current project's engine, with its schema applied. */
export async function openTestDatabase(engine: TestEngine = testEngine(), label = 'db'): Promise<TestDatabase> {
  const location = await testLocation(engine, label);
  const db = openDatabase(location.dataDir, location.database);
  await db.ready();
  return {
    db, engine, dataDir: location.dataDir, url: location.database?.url,
    async close() {
      await db.close();
      await location.remove();
    },
  };
}
