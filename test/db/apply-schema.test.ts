// schema.sql runs once per version of it on a SQLite database (src/db/apply-schema.ts): the
// database keeps the file's fingerprint as its user_version, and a start that finds it skips the
// statements, which took 3 to 5 ms of every start.
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaFingerprint } from '../../src/db/apply-schema.js';
import { openDatabase, type SqliteDb } from '../../src/db/connect.js';
import { tempDataDir } from '../support/fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const indexNamed = (db: SqliteDb, name: string) =>
  db.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = ?").get(name);

describe('schema.sql on a SQLite database', () => {
  it('is applied on the first open, which leaves the fingerprint of this schema.sql in the database', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const db = openDatabase(dir);
    expect(db.sqlite.pragma('user_version', { simple: true })).toBe(schemaFingerprint());
    expect(indexNamed(db, 'servers_team')).toBeDefined();
    await db.close();
  });

  it('is not applied again by an open that finds that fingerprint, and is by one that finds another', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const first = openDatabase(dir);
    first.sqlite.exec('DROP INDEX servers_team');
    await first.close();

    const second = openDatabase(dir);
    expect(indexNamed(second, 'servers_team')).toBeUndefined();
    // What an older or newer schema.sql would have left.
    second.sqlite.pragma('user_version = 7');
    await second.close();

    const third = openDatabase(dir);
    expect(indexNamed(third, 'servers_team')).toBeDefined();
    expect(third.sqlite.pragma('user_version', { simple: true })).toBe(schemaFingerprint());
    await third.close();
  });
});
