// Started by a Node.js older than 22, on which better-sqlite3 13 crashes the process, `teaminfra
// mcp` and `serve` stop with one sentence before loading it. The older Node.js is played in real
// child processes by a preload that replaces process.versions.node (test/db/support/older-node.cjs);
// the sentences themselves are checked on given runtimes, and on Node's own text for an addon
// that cannot load.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addonLoadFailure, runtimeRefusal } from '../../src/db/sqlite-addon.js';
import { DATABASE_FILE } from '../../src/db/connect.js';
import { packageRoot } from '../../src/package-root.js';
import { runCli } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

const PRELOAD = join(packageRoot, 'test', 'db', 'support', 'older-node.cjs');
const NODE_20 = { version: 'v20.19.0', execPath: '/usr/bin/node' };

function nodeDlopenError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ERR_DLOPEN_FAILED' });
}

describe('runtimeRefusal', () => {
  it('names the Node.js found, its path, the one needed and how to get it when it is older than 22', () => {
    expect(runtimeRefusal(NODE_20)).toBe(
      'teaminfra needs Node.js 22 or newer (its SQLite driver, better-sqlite3, crashes on older ones) but was started by ' +
      'Node.js v20.19.0 (/usr/bin/node): start it with Node.js 24 or 22 (for example installed with `npm install -g node@24`).');
  });

  it('lets Node.js 22.0.0 and 24 run', () => {
    expect(runtimeRefusal({ version: 'v22.0.0', execPath: '/usr/bin/node' })).toBeUndefined();
    expect(runtimeRefusal({ version: 'v24.11.0', execPath: '/usr/bin/node' })).toBeUndefined();
  });
});

describe('addonLoadFailure', () => {
  it('says what to run when the addon cannot be loaded', () => {
    const broken = nodeDlopenError('/srv/teaminfra/node_modules/better-sqlite3/prebuilds/linux-x64.node: invalid ELF header');
    expect(addonLoadFailure(broken, { version: 'v24.11.0', execPath: '/usr/bin/node' }, '/srv/teaminfra')).toBe(
      'The SQLite driver (better-sqlite3) cannot be loaded by Node.js v24.11.0 ' +
      '(/srv/teaminfra/node_modules/better-sqlite3/prebuilds/linux-x64.node: invalid ELF header): ' +
      'run "npm ci" in /srv/teaminfra with the Node.js that starts teaminfra (/usr/bin/node).');
  });

  it('leaves any other error alone', () => {
    expect(addonLoadFailure(new Error('SQLITE_CANTOPEN'), NODE_20)).toBeUndefined();
    expect(addonLoadFailure(undefined, NODE_20)).toBeUndefined();
  });
});

describe('teaminfra started by Node.js 20', () => {
  const dataDir = tempDataDir();
  mkdirSync(dataDir, { recursive: true });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { NODE_OPTIONS: `--require ${PRELOAD}`, TEAMINFRA_SMTP_PORT: '0' };

  function expectOneSentence(stderr: string): void {
    expect(stderr).toBe(`teaminfra: ${runtimeRefusal({ version: 'v20.19.0', execPath: process.execPath })}\n`);
  }

  it('stops `teaminfra mcp` with one sentence on stderr and nothing on stdout when started by Node.js 20', async () => {
    writeFileSync(join(dataDir, DATABASE_FILE), '');
    const result = await runCli(['mcp', '--data-dir', dataDir], { env: { ...env, TEAMINFRA_TOKEN: 'tinf_placeholder' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expectOneSentence(result.stderr);
  });

  it('stops `teaminfra serve` with the same sentence when started by Node.js 20', async () => {
    const result = await runCli(['serve', '--data-dir', join(dataDir, 'serve'), '--port', '0'], { env });
    expect(result.code).toBe(1);
    expectOneSentence(result.stderr);
  });
});
