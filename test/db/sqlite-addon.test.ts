// A better-sqlite3 addon compiled by another Node.js: `teaminfra mcp` and `serve` stop with one
// sentence saying what to run, not Node's NODE_MODULE_VERSION message and stack. The failure is
// simulated in real child processes by a preload that fails the addon's load as Node does
// (test/db/support/stale-sqlite-addon.cjs); the sentence itself is checked on Node's own text.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addonLoadFailure } from '../../src/db/sqlite-addon.js';
import { DATABASE_FILE } from '../../src/db/connect.js';
import { packageRoot } from '../../src/package-root.js';
import { runCli } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

const PRELOAD = join(packageRoot, 'test', 'db', 'support', 'stale-sqlite-addon.cjs');
const RUNTIME = { version: 'v20.19.0', abi: '115', execPath: '/usr/bin/node' };

function nodeDlopenError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ERR_DLOPEN_FAILED' });
}

const STALE = nodeDlopenError("The module '/srv/teaminfra/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
  'was compiled against a different Node.js version using\nNODE_MODULE_VERSION 127. This version of Node.js requires\n' +
  'NODE_MODULE_VERSION 115. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).');

describe('addonLoadFailure', () => {
  it('names both Node.js versions and the command to run when the addon was built for another Node.js', () => {
    expect(addonLoadFailure(STALE, RUNTIME, '/srv/teaminfra')).toBe(
      'The SQLite driver (better-sqlite3) was built for Node.js 22 (NODE_MODULE_VERSION 127) but teaminfra runs on ' +
      'Node.js v20.19.0 (NODE_MODULE_VERSION 115): run "npm rebuild better-sqlite3" in /srv/teaminfra with the Node.js ' +
      'that starts teaminfra (/usr/bin/node), or start teaminfra with the Node.js it was built for.');
  });

  it('names the ABI number when the Node.js version of it is not known', () => {
    const newer = nodeDlopenError(STALE.message.replace('NODE_MODULE_VERSION 127', 'NODE_MODULE_VERSION 999'));
    expect(addonLoadFailure(newer, RUNTIME, '/srv/teaminfra')).toMatch(/^The SQLite driver \(better-sqlite3\) was built for NODE_MODULE_VERSION 999 but/);
  });

  it('says what to run when the addon fails to load for another reason', () => {
    const broken = nodeDlopenError('/srv/teaminfra/node_modules/better-sqlite3/build/Release/better_sqlite3.node: invalid ELF header');
    expect(addonLoadFailure(broken, RUNTIME, '/srv/teaminfra')).toBe(
      'The SQLite driver (better-sqlite3) cannot be loaded by Node.js v20.19.0 ' +
      '(/srv/teaminfra/node_modules/better-sqlite3/build/Release/better_sqlite3.node: invalid ELF header): ' +
      'run "npm rebuild better-sqlite3" in /srv/teaminfra with the Node.js that starts teaminfra (/usr/bin/node).');
  });

  it('leaves any other error alone', () => {
    expect(addonLoadFailure(new Error('SQLITE_CANTOPEN'), RUNTIME)).toBeUndefined();
    expect(addonLoadFailure(undefined, RUNTIME)).toBeUndefined();
  });
});

describe('teaminfra with a better-sqlite3 addon built for another Node.js', () => {
  const dataDir = tempDataDir();
  mkdirSync(dataDir, { recursive: true });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { NODE_OPTIONS: `--require ${PRELOAD}`, TEAMINFRA_SMTP_PORT: '0' };

  function expectOneSentence(stderr: string): void {
    expect(stderr).toBe(
      `teaminfra: The SQLite driver (better-sqlite3) was built for Node.js 22 (NODE_MODULE_VERSION 127) but teaminfra runs on ` +
      `Node.js ${process.version} (NODE_MODULE_VERSION ${process.versions.modules}): run "npm rebuild better-sqlite3" in ` +
      `${packageRoot} with the Node.js that starts teaminfra (${process.execPath}), or start teaminfra with the Node.js it was built for.\n`);
  }

  it('stops `teaminfra mcp` with one sentence on stderr and nothing on stdout when the addon is stale', async () => {
    writeFileSync(join(dataDir, DATABASE_FILE), '');
    const result = await runCli(['mcp', '--data-dir', dataDir], { env: { ...env, TEAMINFRA_TOKEN: 'tinf_placeholder' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expectOneSentence(result.stderr);
  });

  it('stops `teaminfra serve` with the same sentence when the addon is stale', async () => {
    const result = await runCli(['serve', '--data-dir', join(dataDir, 'serve'), '--port', '0'], { env });
    expect(result.code).toBe(1);
    expectOneSentence(result.stderr);
  });
});
