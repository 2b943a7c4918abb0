// Runs an ES module script in a child Node and answers the JSON line it prints last. A child
// when the test needs a process of its own: V8's flags, a fresh V8 with nothing compiled yet,
// another user.
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { packageRoot } from '../../src/package-root.js';

export interface ChildNodeOptions {
  /** Node's own flags, before the script. */
  nodeArgs?: readonly string[];
  /** The child's working directory; the checkout by default. */
  cwd?: string;
  /** Run as this user (the tests must run as root to give one). */
  uid?: number;
}

export function inChildNode(script: string, { nodeArgs = [], cwd = packageRoot, uid }: ChildNodeOptions = {}): Record<string, unknown> {
  const run = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
    cwd, uid, encoding: 'utf8', timeout: 30_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}
