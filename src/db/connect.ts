// Opens the database: SQLite (better-sqlite3, WAL, foreign keys on) under the data directory by
// default, or PostgreSQL when a database URL is given (dialect-postgres.ts), for several nodes
// sharing one database. Capabilities never see which engine runs; the few differences live in
// dialect.ts.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Compilable } from 'kysely';
import type { Database } from './tables.js';
import { applySchema } from './apply-schema.js';
import { upgradeSqliteSchema } from './upgrade-schema.js';
import type { DatabaseEngine } from './dialect.js';
import { DEFAULT_POOL_SIZE, openPostgres } from './dialect-postgres.js';
import { openSqliteFile } from './sqlite-addon.js';

export interface Db {
  kysely: Kysely<Database>;
  engine: DatabaseEngine;
  /** The raw SQLite handle, for the few hot paths that use prepared statements directly; SQLite only. */
  sqlite?: SQLite.Database;
  /** Queries compiled and prepared once, for the hot paths (see `fastPathFor`); SQLite only. */
  statements?: StatementCache;
  /** Files of this node (ERP services, caught emails), whichever engine keeps the rows. */
  dataDir: string;
  /** Resolves once the database answers with its schema applied (PostgreSQL connects lazily). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface SqliteDb extends Db {
  engine: 'sqlite';
  sqlite: SQLite.Database;
  statements: StatementCache;
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
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  applySchema(sqlite);
  // A rebuilt table lost its indexes: schema.sql puts them back.
  if (upgradeSqliteSchema(sqlite)) applySchema(sqlite);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  const statements = new StatementCache(kysely, sqlite);
  fastPaths.set(kysely, statements);
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
  const { kysely, end } = openPostgres({ url, poolSize });
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

/**
 * The hot read paths (token lookup, reach-filtered lists) are built with Kysely like every other
 * query, but Kysely builds, compiles and (in its SQLite dialect) prepares the statement again on
 * every call, which costs more than running it. A `PreparedQuery` is the same Kysely query,
 * compiled once with named placeholders in place of its values and prepared once; a call binds
 * the values and runs it. Same SQL, same rows. Only on SQLite: `fastPathFor` answers undefined
 * for anything else (a transaction's Kysely, PostgreSQL), and callers then run the query
 * through Kysely as usual.
 */
export interface PreparedQuery<Row> {
  /** All rows, as Kysely's `execute()` would return them. */
  all(values: Record<string, unknown>): Row[];
  /** The first row or undefined, as Kysely's `executeTakeFirst()`. */
  first(values: Record<string, unknown>): Row | undefined;
}

/** Stands for a named value while a query is compiled once; see `StatementCache.query`. */
export type Placeholder = <T = string>(name: string) => T;

const PLACEHOLDER_MARK = '\u0000teaminfra-placeholder:';

export class StatementCache {
  private readonly queries = new Map<string, PreparedQuery<unknown>>();

  constructor(private readonly kysely: Kysely<Database>, readonly sqlite: SQLite.Database) {}

  /**
   * The query built by `build`, compiled and prepared the first time `key` is asked for. `build`
   * receives the Kysely instance and a placeholder function: every value that varies from call
   * to call must be passed as `placeholder('name')`, and the same key must always build the
   * same shape of query. Values written literally in the query stay as they are.
   */
  query<Row>(key: string, build: (db: Kysely<Database>, placeholder: Placeholder) => Compilable<Row>): PreparedQuery<Row> {
    let prepared = this.queries.get(key) as PreparedQuery<Row> | undefined;
    if (!prepared) {
      prepared = this.prepare(build);
      this.queries.set(key, prepared as PreparedQuery<unknown>);
    }
    return prepared;
  }

  private prepare<Row>(build: (db: Kysely<Database>, placeholder: Placeholder) => Compilable<Row>): PreparedQuery<Row> {
    const placeholder = (<T>(name: string) => `${PLACEHOLDER_MARK}${name}` as unknown as T) as Placeholder;
    const compiled = build(this.kysely, placeholder).compile();
    // Each bound parameter is either a named placeholder or a value written in the query.
    const slots = compiled.parameters.map((value) =>
      typeof value === 'string' && value.startsWith(PLACEHOLDER_MARK)
        ? { name: value.slice(PLACEHOLDER_MARK.length), constant: undefined }
        : { name: undefined, constant: value });
    const statement = this.sqlite.prepare(compiled.sql);
    if (!statement.reader) throw new Error('A prepared query must return rows.');
    const bind = (values: Record<string, unknown>) => slots.map(({ name, constant }) => {
      if (name === undefined) return constant;
      const value = values[name];
      if (value === undefined) throw new Error(`No value for placeholder "${name}".`);
      return value;
    });
    return {
      all: (values) => statement.all(bind(values)) as Row[],
      first: (values) => statement.get(bind(values)) as Row | undefined,
    };
  }
}

const fastPaths = new WeakMap<Kysely<Database>, StatementCache>();

/**
 * The prepared-statement path behind `db`, when `db` is the SQLite connection opened here and no
 * transaction is open on it (a read then must wait for the commit, as Kysely would make it).
 * Undefined otherwise: run the query through Kysely.
 */
export function fastPathFor(db: Kysely<Database>): StatementCache | undefined {
  const statements = fastPaths.get(db);
  return statements && !statements.sqlite.inTransaction ? statements : undefined;
}
