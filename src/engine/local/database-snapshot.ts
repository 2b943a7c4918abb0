// A consistent snapshot of an ERP service's SQLite database (safe while the service writes), and
// the check that a file holds a sound ERP database. No compression here: the ERP image's data
// command (erp-app/data-command.ts) runs these inside a container that has no zstd.
import { existsSync, rmSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { ERP_CORE_TABLES } from '../erp-app/database.js';

/** A problem with the data itself; its message is a sentence for the team. */
export class ArchiveProblem extends Error {}

const ALL_PAGES = 0x7fffffff;

export const NO_DATABASE_YET = 'The ERP service has no database yet (it has never been started), so there is nothing to back up.';

/** Writes one consistent snapshot of `source` to `destination` (replaced if it exists). */
export async function snapshotDatabase(source: string, destination: string): Promise<void> {
  if (!existsSync(source)) throw new ArchiveProblem(NO_DATABASE_YET);
  rmSync(destination, { force: true });
  const db = new SQLite(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // All pages in one step: one read transaction, so the copy is one state of the database even
    // while the service writes (WAL readers do not block it). In several steps, SQLite restarts
    // the copy after every write by the service, which a busy service could make endless.
    await db.backup(destination, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
}

/** Throws an ArchiveProblem unless `file` is an intact SQLite database with the ERP tables. */
export function checkErpDatabase(file: string): void {
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { fileMustExist: true });
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
    if (problems.length !== 1 || problems[0] !== 'ok') {
      throw new ArchiveProblem(`The backup's database failed SQLite's integrity check: ${problems.slice(0, 3).join('; ')}.`);
    }
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
    const missing = ERP_CORE_TABLES.filter((table) => !tables.has(table));
    if (missing.length > 0) throw new ArchiveProblem(`The backup does not hold an ERP database: it has no ${missing.join(', ')} table.`);
  } catch (error) {
    if (error instanceof ArchiveProblem || !(error instanceof SQLite.SqliteError)) throw error;
    throw new ArchiveProblem(`The backup does not hold a sound SQLite database (${error.message}).`);
  } finally {
    db?.close();
  }
}
