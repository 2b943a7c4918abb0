// The preinstall check (scripts/require-supported-node.cjs) run as npm runs it: a child Node
// process. An older Node is played by the running one with process.versions.node replaced
// before the script reads it; .ci/run also runs it on the CI machine's real Node 20.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';

const SCRIPT = join(packageRoot, 'scripts', 'require-supported-node.cjs');

function runCheck(playedVersion: string | undefined, npmCommand: string) {
  const pretend = playedVersion
    ? ['--import', `data:text/javascript,Object.defineProperty(process.versions, 'node', { value: '${playedVersion}' })`]
    : [];
  const result = spawnSync(process.execPath, [...pretend, SCRIPT], {
    env: { ...process.env, npm_command: npmCommand }, encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('scripts/require-supported-node.cjs', () => {
  it('stops npm ci on Node 20 with one sentence naming the Node found, the one needed and how to get it', () => {
    const { code, stdout, stderr } = runCheck('20.19.0', 'ci');
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('teaminfra needs Node.js 22 or newer (engines >=22) but `npm ci` is running on Node.js 20.19.0: '
      + 'install Node 24 LTS (for example `npm install -g node@24`, or from https://nodejs.org) and run `npm ci` again.\n');
  });

  it('names npm install when npm install runs it', () => {
    expect(runCheck('18.20.4', 'install').stderr).toContain('`npm install` is running on Node.js 18.20.4');
  });

  it('lets the Node running this suite install, silently', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
    expect(runCheck(undefined, 'ci')).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('lets Node 22.0.0 install, the oldest that engines allows', () => {
    expect(runCheck('22.0.0', 'install')).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('is the preinstall script of package.json, which npm install and npm ci both run', () => {
    const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string>; engines: { node: string } };
    expect(manifest.scripts.preinstall).toBe('node scripts/require-supported-node.cjs');
    expect(manifest.engines.node).toBe('>=22');
  });
});
