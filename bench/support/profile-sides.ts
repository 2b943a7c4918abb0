// The sides the MCP profiles load (profile-mcp.ts, profile-mcp-gc.ts): the REST list and ours in
// each era (servers/ours.ts, no request log), and baseline (d) in each era (servers/sdk-floor.ts),
// each with the request the MCP bench sends it.
import type { Options } from 'autocannon';
import { mcpListRequest } from './mcp-list-request.js';

export const PROFILE_SIDES = ['rest', 'legacy', 'modern', 'floor-legacy', 'floor-modern'] as const;

/** The server script (under dist/bench/servers) and its arguments for `side`, over `dataDir`. */
export function profileServerOf(side: string, dataDir: string): { script: string; args: string[] } {
  return side.startsWith('floor-') ? { script: 'sdk-floor.js', args: [dataDir] } : { script: 'ours.js', args: [dataDir, 'off'] };
}

/** The request `side` is loaded with, on the server at `url`, with `token`. */
export function profileRequestOf(side: string, url: string, token: string): Options & { body?: string } {
  if (side === 'rest') return { url: `${url}/api/service-erp?limit=50`, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } };
  return mcpListRequest(url, token, side.endsWith('modern') ? 'modern' : 'legacy');
}
