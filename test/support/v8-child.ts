// Runs an ES module script in a child Node with V8's test flags: `%InYoungGeneration(x)` to ask
// where an object lives, `gc()` to collect. The flags are the process's, so a child runs them.
// The script prints one JSON line last; that line is the answer.
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { packageRoot } from '../../src/package-root.js';

export function inV8Child(script: string): Record<string, unknown> {
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script], {
    cwd: packageRoot, encoding: 'utf8', timeout: 30_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}
