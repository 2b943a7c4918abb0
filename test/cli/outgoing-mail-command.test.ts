// `teaminfra admin set-outgoing-mail` as an operator runs it: the relay's password read from
// stdin, never printed, kept sealed; --none removes the relay; a loopback relay needs
// --allow-private; a copy is refused one; each refusal exits 2 with a sentence.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { insertService } from '../../src/db/repositories/services.js';
import { isSealed } from '../../src/secrets/secret-box.js';
import { admin, runCli, seedThroughCli, type CliSeeded } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

const PASSWORD = 'stdin-only p@ss:word';

describe('teaminfra admin set-outgoing-mail', () => {
  let dataDir: string;
  let seeded: CliSeeded;
  beforeAll(async () => {
    dataDir = tempDataDir();
    seeded = await seedThroughCli(dataDir, { team: 'Mail team', service: 'Shop' });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const run = (args: string[], input?: string) => runCli(['admin', 'set-outgoing-mail', ...args, '--data-dir', dataDir], { input });

  it('sets a relay with the password from stdin, prints it without the password, and keeps the password sealed', async () => {
    const result = await run(['--service', seeded.serviceId, '--host', '93.184.216.34', '--port', '587', '--user', 'erp', '--password-stdin'], `${PASSWORD}\n`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(PASSWORD);
    expect(JSON.parse(result.stdout)).toEqual({
      service_id: seeded.serviceId, relay: { host: '93.184.216.34', port: 587, user: 'erp', password_set: true },
      takes_effect: 'at the next start or redeploy of the service',
    });
    const db = openDatabase(dataDir);
    try {
      const row = await db.kysely.selectFrom('outgoing_mail_logins').selectAll().where('service_id', '=', seeded.serviceId).executeTakeFirstOrThrow();
      expect(isSealed(row.password as string)).toBe(true);
      const audit = await db.kysely.selectFrom('audit_log').select(['action', 'actor_type']).where('action', '=', 'set_outgoing_mail').execute();
      expect(audit).toEqual([{ action: 'set_outgoing_mail', actor_type: 'operator' }]);
    } finally {
      await db.close();
    }
  });

  it('refuses a loopback relay unless --allow-private is given', async () => {
    const refused = await run(['--service', seeded.serviceId, '--host', '127.0.0.1', '--port', '2525']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('set-outgoing-mail: The relay host is a private, loopback or link-local address, which is not allowed; the operator can allow it.');
    const allowed = await run(['--service', seeded.serviceId, '--host', '127.0.0.1', '--port', '2525', '--allow-private']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout).relay).toEqual({ host: '127.0.0.1', port: 2525, user: null, password_set: false });
  });

  it('--none removes the relay', async () => {
    const cleared = await run(['--service', seeded.serviceId, '--none']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout).relay).toBeNull();
  });

  it('refuses a copy, a missing port, and a password without a user, each with a sentence', async () => {
    const db = openDatabase(dataDir);
    let copyId: string;
    try {
      copyId = await insertService(db.kysely, { teamId: seeded.teamId, serverId: seeded.serverId, name: 'Shop copy', parentId: seeded.serviceId });
    } finally {
      await db.close();
    }
    const copy = await run(['--service', copyId, '--host', '93.184.216.34', '--port', '587']);
    expect([copy.code, copy.stderr.trim()]).toEqual([2,
      `teaminfra: set-outgoing-mail: ERP service ${copyId} is a copy: its outgoing mail always goes to its mail catcher, never to a relay.`]);
    const noPort = await run(['--service', seeded.serviceId, '--host', '93.184.216.34']);
    expect([noPort.code, noPort.stderr.trim()]).toEqual([2, 'teaminfra: set-outgoing-mail: --port is required.']);
    const noUser = await run(['--service', seeded.serviceId, '--host', '93.184.216.34', '--port', '587', '--password-stdin'], PASSWORD);
    expect([noUser.code, noUser.stderr.trim()]).toEqual([2, 'teaminfra: set-outgoing-mail: --password-stdin needs --user.']);
    // Nothing of the refusals was kept: the relay is still the one --none left (none).
    expect((await admin(dataDir, ['set-outgoing-mail', '--service', seeded.serviceId, '--none'])).relay).toBeNull();
  });
});
