// What tools/list sends for each tool, as the build computed it: scripts/bundle-mcp.mjs puts the
// list into `teaminfra mcp`'s bundle in place of this module, so that the command does not turn
// every capability's zod schemas into JSON Schemas at each start (about 20 ms of the time an
// assistant waits for its first tools/list). Here, outside the bundle, there is none, and
// buildToolCatalog computes them (the HTTP server, the tests, the compiled command).
import type { Tool } from '@modelcontextprotocol/server';

export interface PrebuiltTool {
  readonly name: string;
  readonly tool: Tool;
  readonly legacyTool: Tool;
}

export const PREBUILT_TOOLS: readonly PrebuiltTool[] | undefined = undefined;
