// Which code `teaminfra mcp` runs. The build (scripts/bundle-mcp.mjs, after tsc) makes one file
// of the command, dist/mcp/teaminfra-mcp.js, which starts in about half the time of the compiled
// modules it is made of. It runs when it is at least as new as the compiled command: after a bare
// `tsc` (which rewrites every compiled file) the bundle may hold older code, so the compiled
// modules run instead, slower to start and otherwise the same.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../package-root.js';

export const MCP_BUNDLE = join(packageRoot, 'dist', 'mcp', 'teaminfra-mcp.js');
const COMPILED = join(packageRoot, 'dist', 'src', 'cli', 'mcp.js');

export function mcpBundleIsCurrent(bundle = MCP_BUNDLE, compiled = COMPILED): boolean {
  try {
    return statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
}

export async function loadMcpCommand(): Promise<typeof import('./mcp.js')> {
  if (mcpBundleIsCurrent()) return (await import(pathToFileURL(MCP_BUNDLE).href)) as typeof import('./mcp.js');
  return import('./mcp.js');
}
