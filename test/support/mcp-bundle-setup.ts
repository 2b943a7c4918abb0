// vitest globalSetup. The black-box suites start the compiled command, and `teaminfra mcp` runs
// its one-file bundle only when the bundle is as new as the compiled code (src/cli/mcp-module.ts).
// After a bare `npx tsc -p tsconfig.json` it is not, and the suites would test the slower path
// the bundle replaces; so it is made here, once, before any suite starts (none is running to
// see it half-written), as `npm run build` and `npm test` make it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mcpBundleIsCurrent } from '../../src/cli/mcp-module.js';
import { packageRoot } from '../../src/package-root.js';

export default function setup(): void {
  if (!existsSync(join(packageRoot, 'dist', 'src', 'cli', 'mcp.js')) || mcpBundleIsCurrent()) return;
  execFileSync(process.execPath, [join(packageRoot, 'scripts', 'bundle-mcp.mjs')], { stdio: 'inherit' });
}
