// PostgreSQL: a pg pool behind Kysely's PostgresDialect. schema.sql is applied before the first
// query, statement by statement, one node at a time (a session advisory lock per schema): two
// nodes starting together would otherwise race inside CREATE ... IF NOT EXISTS. Each statement
// commits on its own, so a node starting never holds locks on several tables at once.
import { Kysely, PostgresDialect } from './kysely-runtime.js';
import type pg from 'pg';
import { schemaStatements } from './apply-schema.js';
import { SCHEMA_LOCK_CLASS } from './dialect.js';
import { upgradePostgresSchema } from './upgrade-schema.js';
import type { Database } from './tables.js';

export interface PostgresTarget {
  /** postgres://user:password@host:port/database; `?options=-c search_path=...` selects a schema. */
  url: string;
  /** Connections this process keeps at most (TEAMINFRA_DB_POOL). */
  poolSize: number;
}

// Measured (bench/postgres.bench.ts, 2 cores, 10 concurrent clients of the list): pools of 4, 10
// and 20 connections answer within 5% of each other, 2 about 5% less; the database's cores are the
// limit, not the connections. 10 keeps room for transactions that hold a connection while they
// write (operations, the queue's claims) without waiting behind reads.
export const DEFAULT_POOL_SIZE = 10;

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * Kysely over a pg pool. Nothing connects (and `pg` is not even loaded, which keeps SQLite
 * commands fast to start) until the first query; `end()` closes whatever was opened.
 */
export function openPostgres(target: PostgresTarget): { kysely: Kysely<Database>; end(): Promise<void>; pool(): pg.Pool | undefined } {
  let opened: pg.Pool | undefined;
  let ready: pg.Pool | undefined;
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({
      // Kysely asks for the pool once, before its first query, and again if this fails.
      pool: async () => {
        const pool = await createPool(target);
        opened = pool;
        try {
          await applySchema(pool);
          ready = pool;
        } catch (error) {
          opened = undefined;
          await pool.end().catch(() => undefined);
          throw error;
        }
        return pool;
      },
    }),
  });
  return {
    kysely,
    // Only once Kysely holds it, i.e. the schema is applied.
    pool: () => (ready && !ready.ended && !ready.ending ? ready : undefined),
    async end() {
      await kysely.destroy();
      // Kysely ends the pool it was handed; this covers one it never received.
      if (opened && !opened.ended && !opened.ending) await opened.end();
    },
  };
}

async function createPool(target: PostgresTarget): Promise<pg.Pool> {
  const { default: postgres } = await import('pg');
  const types = new postgres.TypeOverrides();
  // count(*) and BIGINT columns as numbers, as SQLite returns them (exact up to 2^53, far
  // beyond any count or byte size kept here).
  types.setTypeParser(postgres.types.builtins.INT8, (value: string) => Number(value));
  const pool = new postgres.Pool({
    connectionString: target.url, max: target.poolSize, types, application_name: 'teaminfra',
    // A database that cannot be reached fails the request instead of holding it forever.
    connectionTimeoutMillis: 10_000,
  });
  // An idle connection closed by the server (restart, failover) is replaced on next use; without
  // a listener the pool's 'error' event would end the process.
  pool.on('error', (error) => console.error(JSON.stringify({ level: 'warn', msg: 'idle PostgreSQL connection lost', reason: error.message })));
  return pool;
}

async function applySchema(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('select pg_advisory_lock($1::int, hashtext(current_schema()))', [SCHEMA_LOCK_CLASS]);
    try {
      for (const statement of schemaStatements()) await client.query(statement);
      await upgradePostgresSchema(client);
    } finally {
      await client.query('select pg_advisory_unlock($1::int, hashtext(current_schema()))', [SCHEMA_LOCK_CLASS]);
    }
  } catch (error) {
    broken = error as Error;
    throw error;
  } finally {
    // A connection whose unlock may not have happened is closed rather than reused.
    client.release(broken);
  }
}

/** The address without its password, for messages. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.username ? `${decodeURIComponent(parsed.username)}@` : ''}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'postgres://(unparsable address)';
  }
}
