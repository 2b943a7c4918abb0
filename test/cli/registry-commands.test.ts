// `teaminfra admin set-registry-credentials` as an operator runs it: the password read from a
// file, never printed, kept sealed and bound to its server and registry; set again replaces it;
// --remove removes it; each refusal exits 2 with a sentence.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { nowIso } from '../../src/db/ids.js';
import { findRegistryCredentials } from '../../src/engine/docker/registry-credentials.js';
import { SecretBox, isSealed } from '../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../src/secrets/secrets-key.js';
import { runCli, seedThroughCli, type CliSeeded } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

const PASSWORD = 'file-only p@ss:word';

describe('teaminfra admin set-registry-credentials', () => {
  let dataDir: string;
  let seeded: CliSeeded;
  let dockerServerId: string;
  let passwordFile: string;

  beforeAll(async () => {
    dataDir = tempDataDir();
    seeded = await seedThroughCli(dataDir, { team: 'Registry team', service: 'Shop' });
    // A Docker server's rows as create-server --docker-host writes them (the command itself asks no engine).
    dockerServerId = (await seedThroughCli(dataDir, { team: 'Docker team', service: 'Other', server: 'docker' })).serverId;
    const db = openDatabase(dataDir);
    try {
      await db.kysely.insertInto('docker_servers').values({ server_id: dockerServerId, docker_host: 'unix:///var/run/docker.sock', image: null, created_at: nowIso() }).execute();
    } finally {
      await db.close();
    }
    passwordFile = join(dataDir, 'registry-password');
    writeFileSync(passwordFile, `${PASSWORD}\n`);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const run = (args: string[]) => runCli(['admin', 'set-registry-credentials', ...args, '--data-dir', dataDir]);

  it('keeps the login sealed, prints it without the password, and gives it back only to a pull for that server and registry', async () => {
    const result = await run(['--server', dockerServerId, '--registry', 'Registry.Example.com:5000', '--username', 'ci-bot', '--password-file', passwordFile]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(PASSWORD);
    expect(JSON.parse(result.stdout)).toEqual({
      server_id: dockerServerId, registry: 'registry.example.com:5000', username: 'ci-bot', updated_at: expect.any(String),
      takes_effect: "at the next pull from this registry by the server's engine",
    });
    const db = openDatabase(dataDir);
    try {
      const row = await db.kysely.selectFrom('registry_credentials').selectAll().executeTakeFirstOrThrow();
      expect(isSealed(row.password)).toBe(true);
      expect(row.password).not.toContain(PASSWORD);
      const box = new SecretBox(loadSecretsKeys(dataDir));
      expect(await findRegistryCredentials(db.kysely, box, dockerServerId, 'registry.example.com:5000')).toEqual({ username: 'ci-bot', password: PASSWORD });
      expect(await findRegistryCredentials(db.kysely, box, dockerServerId, 'registry.example.com')).toBeNull();
      // Moved to another server's row, the sealed password does not open.
      await db.kysely.insertInto('registry_credentials').values({ ...row, server_id: seeded.serverId }).execute();
      await expect(findRegistryCredentials(db.kysely, box, seeded.serverId, 'registry.example.com:5000')).rejects.toThrow(/does not open/);
      await db.kysely.deleteFrom('registry_credentials').where('server_id', '=', seeded.serverId).execute();
      const audit = await db.kysely.selectFrom('audit_log').select(['action', 'actor_type', 'target_id']).where('action', '=', 'set_registry_credentials').execute();
      expect(audit).toEqual([{ action: 'set_registry_credentials', actor_type: 'operator', target_id: dockerServerId }]);
    } finally {
      await db.close();
    }
  });

  it('replaces the login when set again, and --remove removes it', async () => {
    const again = await run(['--server', dockerServerId, '--registry', 'registry.example.com:5000', '--username', 'other', '--password-file', passwordFile]);
    expect(again.code, again.stderr).toBe(0);
    const removed = await run(['--server', dockerServerId, '--registry', 'registry.example.com:5000', '--remove']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ server_id: dockerServerId, registry: 'registry.example.com:5000', removed: true });
    const db = openDatabase(dataDir);
    try {
      expect(await db.kysely.selectFrom('registry_credentials').selectAll().execute()).toEqual([]);
    } finally {
      await db.close();
    }
    const nothing = await run(['--server', dockerServerId, '--registry', 'registry.example.com:5000', '--remove']);
    expect(JSON.parse(nothing.stdout).removed).toBe(false);
  });

  it('keeps Docker Hub under one name, however the operator writes it', async () => {
    const result = await run(['--server', dockerServerId, '--registry', 'index.docker.io', '--username', 'hub-user', '--password-file', passwordFile]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).registry).toBe('docker.io');
  });

  it('refuses, each with a sentence: no such server, a server of local processes, a registry with a scheme, an empty or unreadable file, --remove with a login', async () => {
    const empty = join(dataDir, 'empty-password');
    writeFileSync(empty, '\n');
    const login = ['--username', 'u', '--password-file', passwordFile];
    const cases: [string[], string][] = [
      [['--server', 'srv_nope', '--registry', 'r.example.com', ...login], 'set-registry-credentials: there is no server srv_nope.'],
      [['--server', seeded.serverId, '--registry', 'r.example.com', ...login],
        `set-registry-credentials: server ${seeded.serverId} is not a Docker server; only a Docker engine pulls images.`],
      [['--server', dockerServerId, '--registry', 'https://r.example.com/v2', ...login],
        'set-registry-credentials: --registry is a registry\'s HOST[:PORT] as image names start with it (registry.example.com, 127.0.0.1:5000, ' +
        'docker.io for Docker Hub), without a scheme or path; got "https://r.example.com/v2".'],
      [['--server', dockerServerId, '--registry', 'r.example.com:99999', ...login], 'set-registry-credentials: --registry is a registry\'s HOST[:PORT]'],
      [['--server', dockerServerId, '--registry', 'r.example.com', '--username', 'u', '--password-file', empty],
        `set-registry-credentials: ${empty} is empty; it holds the registry's password (or token) on one line.`],
      [['--server', dockerServerId, '--registry', 'r.example.com', '--username', 'u', '--password-file', join(dataDir, 'missing')],
        `set-registry-credentials: cannot read ${join(dataDir, 'missing')} (ENOENT).`],
      [['--server', dockerServerId, '--registry', 'r.example.com', '--password-file', passwordFile], 'set-registry-credentials: --username is required.'],
      [['--server', dockerServerId, '--registry', 'r.example.com', '--remove', '--username', 'u'], 'set-registry-credentials: --remove takes no --username or --password-file.'],
    ];
    for (const [args, sentence] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(sentence);
      expect(result.stderr).not.toContain(PASSWORD);
    }
  });
});
