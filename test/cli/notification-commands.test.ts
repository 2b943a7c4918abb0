// `teaminfra admin set-notification-mail` as an operator runs it: the relay and the sender are
// kept and printed; a relay that is not smtp://HOST:PORT, or a sender that is no address, is
// refused with a sentence and exit code 2.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { runCli } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

describe('teaminfra admin set-notification-mail', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = tempDataDir();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const run = (args: string[]) => runCli(['admin', 'set-notification-mail', ...args, '--data-dir', dataDir]);
  const stored = async () => {
    const db = openDatabase(dataDir);
    try {
      return await db.kysely.selectFrom('notification_mail').select(['relay_host', 'relay_port', 'from_address']).execute();
    } finally {
      await db.close();
    }
  };

  it('keeps the relay with a sender of this machine by default, and another sender when given', async () => {
    const first = await run(['--relay', 'smtp://mail.example.com:2525']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ relay: 'smtp://mail.example.com:2525', from: `teaminfra@${hostname()}` });
    const second = await run(['--relay', 'smtp://127.0.0.1:25', '--from', 'alerts@example.com']);
    expect(JSON.parse(second.stdout)).toEqual({ relay: 'smtp://127.0.0.1:25', from: 'alerts@example.com' });
    expect(await stored()).toEqual([{ relay_host: '127.0.0.1', relay_port: 25, from_address: 'alerts@example.com' }]);
  });

  it.each([
    ['a relay without a port', ['--relay', 'smtp://mail.example.com'], '--relay must be smtp://HOST:PORT'],
    ['another scheme', ['--relay', 'http://mail.example.com:25'], '--relay must be smtp://HOST:PORT'],
    ['a login in the relay', ['--relay', 'smtp://user:secret@mail.example.com:25'], '--relay must be smtp://HOST:PORT'],
    ['no relay', [], '--relay'],
    ['a sender that is no address', ['--relay', 'smtp://mail.example.com:25', '--from', 'alerts'], '--from "alerts" is not an email address'],
  ])('refuses %s with a sentence', async (_what, args, sentence) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(sentence);
    expect(result.stderr).not.toContain('secret');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
