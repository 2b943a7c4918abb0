/**
 * The hot read paths (token lookup, reach-filtered lists) are built with Kysely like every other
 * query, but Kysely builds and compiles the statement again on every call (and the engine parses
 * and plans it again), which costs more than running it. A `PreparedQuery` is the same Kysely
 * query, compiled once with named placeholders in place of its values and prepared once; a call
 * binds the values and runs it. Same SQL, same rows.
 * - SQLite: a better-sqlite3 statement, run synchronously.
 * - PostgreSQL: a named prepared statement (pg parses it once per connection, then only binds).
 * `fastPathFor` answers undefined where this does not apply (a transaction's Kysely, a
 * PostgreSQL pool not opened yet), and callers then run the query through Kysely as usual.
 */
import type SQLite from 'better-sqlite3';
import type { Compilable, Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from './tables.js';
import { rowBuilderOf } from './raw-rows.js';

export interface PreparedQuery<Row> {
  /** All rows, as Kysely's `execute()` would return them. */
  all(values: Record<string, unknown>): Row[] | Promise<Row[]>;
  /** The first row or undefined, as Kysely's `executeTakeFirst()`. */
  first(values: Record<string, unknown>): Row | undefined | Promise<Row | undefined>;
}

/** Stands for a named value while a query is compiled once; see `PreparedQueries.query`. */
export type Placeholder = <T = string>(name: string) => T;

export type BuildQuery<Row> = (db: Kysely<Database>, placeholder: Placeholder) => Compilable<Row>;

const PLACEHOLDER_MARK = '\u0000teaminfra-placeholder:';

/** The SQL of `build`, and how to turn named values into its parameters. */
function compileWithPlaceholders<Row>(kysely: Kysely<Database>, build: BuildQuery<Row>) {
  const placeholder = (<T>(name: string) => `${PLACEHOLDER_MARK}${name}` as unknown as T) as Placeholder;
  const compiled = build(kysely, placeholder).compile();
  // Each bound parameter is either a named placeholder or a value written in the query.
  const slots = compiled.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(PLACEHOLDER_MARK)
      ? { name: value.slice(PLACEHOLDER_MARK.length), constant: undefined }
      : { name: undefined, constant: value });
  const bind = (values: Record<string, unknown>) => slots.map(({ name, constant }) => {
    if (name === undefined) return constant;
    const value = values[name];
    if (value === undefined) throw new Error(`No value for placeholder "${name}".`);
    return value;
  });
  return { sql: compiled.sql, bind };
}

export abstract class PreparedQueries {
  private readonly queries = new Map<string, PreparedQuery<unknown>>();

  constructor(protected readonly kysely: Kysely<Database>) {}

  /**
   * The query built by `build`, compiled and prepared the first time `key` is asked for. `build`
   * receives the Kysely instance and a placeholder function: every value that varies from call
   * to call must be passed as `placeholder('name')`, and the same key must always build the
   * same shape of query. Values written literally in the query stay as they are.
   */
  query<Row>(key: string, build: BuildQuery<Row>): PreparedQuery<Row> {
    let prepared = this.queries.get(key) as PreparedQuery<Row> | undefined;
    if (!prepared) {
      const { sql, bind } = compileWithPlaceholders(this.kysely, build);
      prepared = this.prepare<Row>(key, sql, bind);
      this.queries.set(key, prepared as PreparedQuery<unknown>);
    }
    return prepared;
  }

  /** Whether a query on `db` may take this path now. */
  abstract usable(): boolean;

  protected abstract prepare<Row>(key: string, sql: string, bind: (values: Record<string, unknown>) => unknown[]): PreparedQuery<Row>;
}

export class SqliteStatements extends PreparedQueries {
  constructor(kysely: Kysely<Database>, readonly sqlite: SQLite.Database) {
    super(kysely);
  }

  /** Not inside a transaction: a read then must wait for the commit, as Kysely would make it. */
  usable(): boolean {
    return !this.sqlite.inTransaction;
  }

  protected prepare<Row>(_key: string, sql: string, bind: (values: Record<string, unknown>) => unknown[]): PreparedQuery<Row> {
    const statement = this.sqlite.prepare(sql);
    if (!statement.reader) throw new Error('A prepared query must return rows.');
    // Raw mode, rows built in JS: the same rows for much less CPU (raw-rows.ts).
    statement.raw(true);
    const rowOf = rowBuilderOf(statement.columns().map((column) => column.name));
    return {
      all: (values) => (statement.all(bind(values)) as unknown[][]).map(rowOf) as Row[],
      first: (values) => {
        const raw = statement.get(bind(values)) as unknown[] | undefined;
        return (raw === undefined ? undefined : rowOf(raw)) as Row | undefined;
      },
    };
  }
}

export class PostgresStatements extends PreparedQueries {
  /** `pool()`: the pool once Kysely has opened it (and applied the schema), else undefined. */
  constructor(kysely: Kysely<Database>, private readonly pool: () => pg.Pool | undefined) {
    super(kysely);
  }

  usable(): boolean {
    return this.pool() !== undefined;
  }

  protected prepare<Row>(key: string, sql: string, bind: (values: Record<string, unknown>) => unknown[]): PreparedQuery<Row> {
    // pg prepares a named statement on a connection the first time it runs there, then only binds.
    const name = `ti:${key}`;
    // PostgreSQL cuts longer names, so two keys alike in their first 63 characters would collide.
    if (name.length > 63) throw new Error(`Prepared query key too long for PostgreSQL: ${key}`);
    const run = async (values: Record<string, unknown>) => (await this.pool()!.query({ name, text: sql, values: bind(values) })).rows as Row[];
    return { all: run, first: async (values) => (await run(values))[0] };
  }
}

const fastPaths = new WeakMap<Kysely<Database>, PreparedQueries>();

export function registerFastPath(kysely: Kysely<Database>, queries: PreparedQueries): void {
  fastPaths.set(kysely, queries);
}

/**
 * The prepared-statement path behind `db`, when `db` is the connection opened by openDatabase
 * (not a transaction's) and that path can be used now. Undefined otherwise: run the query
 * through Kysely.
 */
export function fastPathFor(db: Kysely<Database>): PreparedQueries | undefined {
  const queries = fastPaths.get(db);
  return queries?.usable() ? queries : undefined;
}
