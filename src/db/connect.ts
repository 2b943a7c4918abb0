// Opens the database: SQLite (better-sqlite3, WAL, foreign keys on) under the data directory by
// default, or PostgreSQL when a database URL is given (dialect-postgres.ts), for several nodes
// sharing one database. Capabilities never see which engine runs; the few differences live in
// dialect.ts.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { StablePlanSqliteDialect } from './dialect-sqlite.js';
import { Kysely, sql } from './kysely-runtime.js';
import type { Database } from './tables.js';
import { applySchema, markSqliteSchemaCurrent, sqliteSchemaIsCurrent } from './apply-schema.js';
import { upgradeSqliteSchema } from './upgrade-schema.js';
import type { DatabaseEngine } from './dialect.js';
import { DEFAULT_POOL_SIZE, openPostgres } from './dialect-postgres.js';
import { openSqliteFile } from './sqlite-addon.js';
import { PostgresStatements, registerFastPath, SqliteStatements } from './prepared-queries.js';

export { fastPathFor, type Placeholder, type PreparedQuery } from './prepared-queries.js';

export interface Db {
  kysely: Kysely<Database>;
  engine: DatabaseEngine;
  /** The raw SQLite handle, for the few hot paths that use prepared statements directly; SQLite only. */
  sqlite?: SQLite.Database;
  /** Queries compiled and prepared once, for the hot paths (prepared-queries.ts); SQLite only here. */
  statements?: SqliteStatements;
  /** Files of this node (ERP services, caught emails), whichever engine keeps the rows. */
  dataDir: string;
  /** Resolves once the database answers with its schema applied (PostgreSQL connects lazily). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SqliteDb extends Db {
  engine: 'sqlite';
  sqlite: SQLite.Database;
  statements: SqliteStatements;
}

/** Where the rows live: no `url`, SQLite in the data directory; a postgres:// `url`, PostgreSQL. */
export interface DatabaseOptions {
  url?: string | undefined;
  /** PostgreSQL connections this process keeps at most; default 10. */
  poolSize?: number | undefined;
}

export const DATABASE_FILE = 'teaminfra.sqlite';

export function openDatabase(dataDir: string): SqliteDb;
export function openDatabase(dataDir: string, options: DatabaseOptions | undefined): Db;
export function openDatabase(dataDir: string, options: DatabaseOptions = {}): Db {
  if (options.url) return openPostgresDb(dataDir, options.url, options.poolSize ?? DEFAULT_POOL_SIZE);
  return openSqliteDb(dataDir);
}

function openSqliteDb(dataDir: string): SqliteDb {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Created owner-only whatever the umask (it holds signing keys and password hashes); SQLite
  // gives its -wal and -shm files the mode of the database file.
  const file = join(dataDir, DATABASE_FILE);
  closeSync(openSync(file, 'a', 0o600));
  const sqlite = openSqliteFile(file);
  // First, so that every statement after it waits for another process's lock instead of failing
  // at once with "database is locked" (an admin command run while serve writes, for one).
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  // Once per schema.sql: a database that already has this one's statements skips them (apply-schema.ts).
  if (!sqliteSchemaIsCurrent(sqlite)) {
    applySchema(sqlite);
    // A rebuilt table lost its indexes: schema.sql puts them back.
    if (upgradeSqliteSchema(sqlite)) applySchema(sqlite);
    markSqliteSchemaCurrent(sqlite);
  }
  const kysely = new Kysely<Database>({ dialect: new StablePlanSqliteDialect({ database: sqlite }) });
  const statements = new SqliteStatements(kysely, sqlite);
  registerFastPath(kysely, statements);
  return {
    kysely,
    engine: 'sqlite',
    sqlite,
    statements,
    dataDir,
    async ready() {},
    async close() {
      await kysely.destroy();
    },
  };
}

function openPostgresDb(dataDir: string, url: string, poolSize: number): Db {
  const { kysely, end, pool } = openPostgres({ url, poolSize });
  registerFastPath(kysely, new PostgresStatements(kysely, pool));
  return {
    kysely,
    engine: 'postgres',
    dataDir,
    async ready() {
      await sql`select 1`.execute(kysely);
    },
    close: end,
  };
}

