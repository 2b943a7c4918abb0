// `npm test` on a machine without Chromium: the browser suites are skipped with one line saying
// how to run them, unless TEAMINFRA_REQUIRE_BROWSER=1 (CI), where a missing browser fails. Runs
// vitest itself as a child process on one cheap suite and one browser suite.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';

const VITEST = join(packageRoot, 'node_modules', 'vitest', 'vitest.mjs');
const SUITES = ['test/auth/expiry.test.ts', 'test/panel/members.browser.test.ts'];

/** vitest run in the package root, with none of this run's own vitest or teaminfra settings. */
function runVitest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VITEST|TEAMINFRA_)/.test(name)));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, 'run', '--project', 'sqlite', ...SUITES], {
      cwd: packageRoot, env: { ...inherited, NODE_ENV: '', NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : []);
}

describe('vitest.config.ts', () => {
  it('skips the browser suites with one line saying how to run them when Chromium is missing', async () => {
    const run = await runVitest({ CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(run.output.match(/Browser suites SKIPPED/g)).toHaveLength(1);
    expect(run.output).toContain('Chromium not found at /nonexistent/chromium');
    expect(run.output).toContain('TEAMINFRA_REQUIRE_BROWSER=1');
    expect(run.output).not.toContain('members.browser.test.ts');
    expect(run.code, run.output).toBe(0);
  }, 60_000);

  it('fails the browser suites when Chromium is missing and TEAMINFRA_REQUIRE_BROWSER=1', async () => {
    const run = await runVitest({ CHROMIUM_PATH: '/nonexistent/chromium', TEAMINFRA_REQUIRE_BROWSER: '1' });
    expect(run.output).not.toContain('Browser suites SKIPPED');
    expect(run.output).toContain('Chromium not found at /nonexistent/chromium: install it');
    expect(run.code).toBe(1);
  }, 60_000);

  it('names every suite that launches Chromium *.browser.test.ts, so that it is skipped without one', () => {
    const unnamed = testFiles(join(packageRoot, 'test'))
      .filter((file) => !file.endsWith('.browser.test.ts') && /\blaunchHeadless\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(packageRoot, file));
    expect(unnamed).toEqual([]);
  });
});
