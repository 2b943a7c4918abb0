// Opens the database: SQLite (better-sqlite3, WAL, foreign keys on) under the data directory.
// The PostgreSQL dialect joins here later; capabilities never see which engine runs.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './tables.js';
import { applySchema } from './apply-schema.js';

export interface Db {
  kysely: Kysely<Database>;
  /** The raw SQLite handle, for the few hot paths that use prepared statements directly. */
  sqlite: SQLite.Database;
  dataDir: string;
  close(): Promise<void>;
}

export const DATABASE_FILE = 'teaminfra.sqlite';

export function openDatabase(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new SQLite(join(dataDir, DATABASE_FILE));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  applySchema(sqlite);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    kysely,
    sqlite,
    dataDir,
    async close() {
      await kysely.destroy();
    },
  };
}
