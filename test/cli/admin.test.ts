// The operator command line's contract (DESIGN.md): one JSON object per admin command, and a
// sentence on stderr with a non-zero exit for bad arguments.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { verifyPassword } from '../../src/auth/password.js';
import { admin, runCli } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

describe('teaminfra admin', () => {
  let dataDir: string;
  let teamId: string;
  beforeAll(async () => {
    dataDir = tempDataDir();
    teamId = (await admin(dataDir, ['create-team', '--name', 'Acme', '--plan', 'business', '--timezone', 'Europe/Brussels'])).id;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const failing = async (args: string[]) => {
    const result = await runCli(['admin', ...args, '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    return result.stderr;
  };

  it('create-team prints {"id"} of a team with the chosen plan and time zone', async () => {
    expect(teamId).toMatch(/^team_/);
    const db = openDatabase(dataDir);
    const team = await db.kysely.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirstOrThrow();
    await db.close();
    expect(team).toMatchObject({ name: 'Acme', plan: 'business', timezone: 'Europe/Brussels' });
  });

  it('refuses a name or email with a control or direction character, naming the option', async () => {
    expect(await failing(['create-team', '--name', 'Acme\u202Egpj.exe'])).toContain('create-team: --name must not contain control characters');
    expect(await failing(['create-server', '--team', teamId, '--name', 'eu\u001b[31m'])).toContain('(found U+001B)');
    expect(await failing(['add-member', '--team', teamId, '--email', 'ada\u2066@example.com', '--role', 'member'])).toContain('add-member: --email must not');
    expect(await failing(['create-webhook', '--team', teamId, '--url', 'https://hooks.example.com/', '--description', 'ops\u202E']))
      .toContain('create-webhook: The description must not contain');
  });

  it('add-member reads the password from stdin and stores only its scrypt hash', async () => {
    const { id } = await admin(dataDir, ['add-member', '--team', teamId, '--email', 'Ada@Example.com', '--role', 'owner', '--password-stdin'], 'correct horse battery\n');
    const db = openDatabase(dataDir);
    const user = await db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await db.close();
    expect(user.email).toBe('ada@example.com');
    expect(user.password_hash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('correct horse battery', user.password_hash as string)).toBe(true);
  });

  it('create-server, create-service and create-token print ids, and the token value once', async () => {
    const server = await admin(dataDir, ['create-server', '--team', teamId, '--name', 'eu-1']);
    const service = await admin(dataDir, ['create-service', '--team', teamId, '--server', server.id, '--name', 'Shop']);
    const token = await admin(dataDir, [
      'create-token', '--team', teamId, '--name', 'ci', '--accepted-by', 'api', '--permissions', 'services:operate,backups:read',
      '--services', service.id, '--expires-on', '2999-01-31', '--created-by', 'ada@example.com',
    ]);
    expect(server.id).toMatch(/^srv_/);
    expect(service.id).toMatch(/^svc_/);
    expect(Object.keys(token).sort()).toEqual(['id', 'token']);
    expect(token.token).toMatch(/^tinf_/);
    const db = openDatabase(dataDir);
    const stored = await db.kysely.selectFrom('api_tokens').selectAll().where('id', '=', token.id).executeTakeFirstOrThrow();
    const dump = JSON.stringify(await db.kysely.selectFrom('api_tokens').selectAll().execute());
    await db.close();
    expect(stored).toMatchObject({ accepted_by: 'api', full_access: 0, permissions: 'services:operate,backups:read', restrict_services: 1, expires_on: '2999-01-31' });
    expect(dump).not.toContain(token.token);
  });

  it('create-token requires exactly one of --permissions and --full-access', async () => {
    expect(await failing(['create-token', '--team', teamId, '--name', 'x'])).toMatch(/exactly one of --permissions p1,p2 or --full-access/);
    expect(await failing(['create-token', '--team', teamId, '--name', 'x', '--full-access', '--permissions', 'services:read']))
      .toMatch(/exactly one/);
  });

  it('create-token names an unknown permission and lists the known ones', async () => {
    const stderr = await failing(['create-token', '--team', teamId, '--name', 'x', '--permissions', 'services:fly']);
    expect(stderr).toContain('unknown permission services:fly');
    expect(stderr).toContain('services:operate');
  });

  it('create-token refuses a service of another team', async () => {
    const other = (await admin(dataDir, ['create-team', '--name', 'Other'])).id;
    const server = await admin(dataDir, ['create-server', '--team', other, '--name', 'x']);
    const service = await admin(dataDir, ['create-service', '--team', other, '--server', server.id, '--name', 'theirs']);
    expect(await failing(['create-token', '--team', teamId, '--name', 'x', '--full-access', '--services', service.id]))
      .toContain(`No ERP service with id ${service.id} in team ${teamId}`);
  });

  it('refuses bad values with a sentence: plan, date, time zone, option, team', async () => {
    expect(await failing(['create-team', '--name', 'x', '--plan', 'gold'])).toContain('--plan must be one of free, starter, business, enterprise');
    expect(await failing(['create-token', '--team', teamId, '--name', 'x', '--full-access', '--expires-on', 'tomorrow']))
      .toContain('--expires-on must be a date, YYYY-MM-DD');
    expect(await failing(['create-team', '--name', 'x', '--timezone', 'Mars/Olympus'])).toContain('unknown time zone');
    expect(await failing(['create-team', '--name', 'x', '--colour', 'red'])).toMatch(/Unknown option '--colour'/);
    expect(await failing(['set-plan', '--team', 'team_nope', '--plan', 'free'])).toContain('No team with id team_nope');
    expect(await failing(['frobnicate'])).toContain('unknown command "frobnicate"');
  });

  it('remove-member prints {"removed": true} but never removes the last owner', async () => {
    await admin(dataDir, ['add-member', '--team', teamId, '--email', 'bob@example.com', '--role', 'member']);
    expect(await admin(dataDir, ['remove-member', '--team', teamId, '--email', 'bob@example.com'])).toEqual({ removed: true });
    expect(await failing(['remove-member', '--team', teamId, '--email', 'ada@example.com'])).toContain("last owner");
  });

  it('create-webhook prints {"id", "secret"} and refuses a private address without --allow-private', async () => {
    const webhook = await admin(dataDir, ['create-webhook', '--team', teamId, '--url', 'http://127.0.0.1:9/hook', '--events', 'service.started,service.failed', '--allow-private']);
    expect(Object.keys(webhook).sort()).toEqual(['id', 'secret']);
    expect(webhook.secret).toMatch(/^whsec_/);
    expect(await failing(['create-webhook', '--team', teamId, '--url', 'https://127.0.0.1/hook'])).toContain('private, loopback or link-local');
    expect(await failing(['create-webhook', '--team', teamId, '--url', 'https://hooks.example.com/', '--events', 'service.exploded']))
      .toContain('Unknown event type service.exploded');
  });

  it('set-backup-retention keeps a team\'s own numbers, "default" clears one, and refuses a number that is not one', async () => {
    expect(await admin(dataDir, ['set-backup-retention', '--team', teamId, '--keep-manual', '10', '--keep-safety', '0'])).toEqual({ id: teamId });
    const read = async () => {
      const db = openDatabase(dataDir);
      const row = await db.kysely.selectFrom('team_backup_retention').select(['keep_manual', 'keep_safety']).where('team_id', '=', teamId).executeTakeFirst();
      await db.close();
      return row;
    };
    expect(await read()).toEqual({ keep_manual: 10, keep_safety: 0 });
    await admin(dataDir, ['set-backup-retention', '--team', teamId, '--keep-manual', 'default', '--keep-safety', '2']);
    expect(await read()).toEqual({ keep_manual: null, keep_safety: 2 });
    expect(await failing(['set-backup-retention', '--team', teamId, '--keep-manual', '0']))
      .toContain('set-backup-retention: --keep-manual must be a number of backups from 1 to 10000; got "0".');
    expect(await failing(['set-backup-retention', '--team', teamId])).toContain('give --keep-manual N and/or --keep-safety N');
  });

  it('prints usage for help and refuses an unknown command', async () => {
    const help = await runCli(['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('teaminfra admin create-token');
    const unknown = await runCli(['launch']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command "launch"');
  });
});
