// Which code `teaminfra mcp` runs. The build (scripts/bundle-mcp.mjs, after tsc) makes one file
// of the command, dist/mcp/teaminfra-mcp.cjs, which starts in about half the time of the compiled
// modules it is made of, and faster again with the code cache of its start beside it
// (code-cached-script.ts). It runs when it is at least as new as the compiled command: after a
// bare `tsc` (which rewrites every compiled file) the bundle may hold older code, so the compiled
// modules run instead, slower to start and otherwise the same.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import * as packageRootModule from '../package-root.js';
import { packageRoot } from '../package-root.js';
import { runCodeCached } from './code-cached-script.js';
import * as usageModule from './usage.js';

export const MCP_BUNDLE = join(packageRoot, 'dist', 'mcp', 'teaminfra-mcp.cjs');
const COMPILED = join(packageRoot, 'dist', 'src', 'cli', 'mcp.js');

/**
 * The compiled modules the bundle requires rather than carries, by the specifier it requires them
 * with: main.js loads them too, and checks `instanceof UsageError` on what the command throws,
 * which needs the one class both use.
 */
export const SHARED_WITH_BUNDLE: Readonly<Record<string, unknown>> = {
  '../src/package-root.js': packageRootModule,
  '../src/cli/usage.js': usageModule,
};

type McpCommand = typeof import('./mcp.js');

export function mcpBundleIsCurrent(bundle = MCP_BUNDLE, compiled = COMPILED): boolean {
  try {
    return statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
}

export async function loadMcpCommand(): Promise<Pick<McpCommand, 'runMcpStdio'>> {
  if (!mcpBundleIsCurrent()) return import('./mcp.js');
  const bundle = runCodeCached<McpCommand>(MCP_BUNDLE, SHARED_WITH_BUNDLE);
  return { runMcpStdio: (args) => bundle.exports.runMcpStdio(args, () => bundle.saveCodeCache()) };
}
