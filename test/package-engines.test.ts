// package.json promises Node >= 22 (22 and 24 LTS). npm warns (EBADENGINE) at install time for
// every installed package whose declared engines exclude the running Node, so what the lockfile
// installs (`npm ci`) must only be packages that declare all of them. Optional packages for other
// platforms (wasm bindings) are in the lockfile but never installed here, so never checked.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';

// What runs teaminfra (the dependencies) supports every Node that engines allows, from 22.0.0.
// The test toolchain (vite/rolldown: "^20.19.0 || >=22.12.0") starts at 22.12, the first 22
// that runs ES modules from require() unflagged: development and CI need that 22 or 24.
const SUPPORTED_NODES = { runtime: ['22.0.0', '24.0.0'], development: ['22.12.0', '24.0.0'] };

interface LockedPackage { version?: string; dev?: boolean; engines?: { node?: string } | string[] }

describe('package-lock.json', () => {
  it('installs no package whose engines exclude a supported Node', () => {
    const lock = JSON.parse(readFileSync(join(packageRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };
    const refusals: string[] = [];
    for (const [path, locked] of Object.entries(lock.packages)) {
      const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
      if (path === '' || range === undefined || !existsSync(join(packageRoot, path))) continue;
      const nodes = locked.dev ? SUPPORTED_NODES.development : SUPPORTED_NODES.runtime;
      for (const node of nodes.filter((version) => !semver.satisfies(version, range))) {
        refusals.push(`${path.replace(/^.*node_modules\//, '')}@${locked.version} requires node ${range} (not ${node})`);
      }
    }
    expect(refusals).toEqual([]);
  });
});
