// schema.sql runs once per version of it on a SQLite database (src/db/apply-schema.ts): the
// database keeps the file's fingerprint as its user_version, and a start that finds it skips the
// statements, which took 3 to 5 ms of every start.
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaFingerprint } from '../../src/db/apply-schema.js';
import { openDatabase, type SqliteDb } from '../../src/db/connect.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { createToken } from '../../src/db/repositories/tokens.js';
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

  it('gives a database made before image digests the column, its rows kept, and the registry logins table', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const first = openDatabase(dir);
    // docker_services as an earlier schema.sql made it, with a service's row in it.
    first.sqlite.pragma('foreign_keys = OFF');
    first.sqlite.exec('DROP TABLE docker_services; DROP TABLE registry_credentials');
    first.sqlite.exec('CREATE TABLE docker_services (service_id TEXT PRIMARY KEY REFERENCES erp_services (id), volume TEXT NOT NULL, ' +
      "mail_username TEXT, mail_password TEXT, updated_at TEXT NOT NULL); INSERT INTO docker_services VALUES ('svc_old', 'teaminfra-data-svc_old', NULL, NULL, 'then')");
    first.sqlite.pragma('user_version = 7');
    await first.close();

    const upgraded = openDatabase(dir);
    expect(await upgraded.kysely.selectFrom('docker_services').selectAll().execute())
      .toEqual([{ service_id: 'svc_old', volume: 'teaminfra-data-svc_old', mail_username: null, mail_password: null, updated_at: 'then', image_digests: null }]);
    expect(await upgraded.kysely.selectFrom('registry_credentials').selectAll().execute()).toEqual([]);
    await upgraded.close();
  });

  it('lets a database made when a download link needed a token keep its links, and take links of members', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const first = openDatabase(dir);
    const teamId = await insertTeam(first.kysely, { name: 'Links', plan: 'starter', timezone: 'UTC' });
    const userId = await upsertMember(first.kysely, { teamId, email: 'member@example.com', role: 'member', passwordHash: null });
    const token = await createToken(first.kysely, {
      teamId, name: 'Old', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [], serviceIds: null, serverIds: null,
      expiresOn: null, createdByUserId: null,
    });
    // download_links as an earlier schema.sql made it (token_id NOT NULL), with a link in it.
    first.sqlite.exec('DROP TABLE download_links');
    first.sqlite.exec('CREATE TABLE download_links (id_hash TEXT PRIMARY KEY, team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE, ' +
      'token_id     TEXT NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE, file TEXT NOT NULL, created_at TEXT NOT NULL, ' +
      'expires_at TEXT NOT NULL, used_at TEXT)');
    first.sqlite.prepare("INSERT INTO download_links VALUES ('old', ?, ?, '{}', 'then', 'later', NULL)").run(teamId, token.id);
    first.sqlite.pragma('user_version = 7');
    await first.close();

    const upgraded = openDatabase(dir);
    upgraded.sqlite.prepare("INSERT INTO download_links (id_hash, team_id, token_id, user_id, file, created_at, expires_at) VALUES ('new', ?, NULL, ?, '{}', 'now', 'later')")
      .run(teamId, userId);
    expect(await upgraded.kysely.selectFrom('download_links').select(['id_hash', 'token_id', 'user_id']).orderBy('id_hash').execute())
      .toEqual([{ id_hash: 'new', token_id: null, user_id: userId }, { id_hash: 'old', token_id: token.id, user_id: null }]);
    await upgraded.close();
  });
});
