// `teaminfra mcp [--data-dir DIR] [--database-url URL]`: MCP over stdio, token from TEAMINFRA_TOKEN.
// First, before any zod schema is built (interpreted-zod.ts says why).
import './interpreted-zod.js';
import { existsSync } from 'node:fs';
import { serveStdio, StdioRefusal, TOKEN_VARIABLE } from '../mcp/stdio.js';
import { dataLocationOf, parseOptions } from './options.js';
import { DataDirRefusal, secureDataDir } from './secure-data-dir.js';
import { UsageError } from './usage.js';

/** `started` is called once the first tools/list answer is written (mcp-module.ts keeps the code cache of the start then). */
export async function runMcpStdio(args: string[], started?: () => void): Promise<void> {
  const values = parseOptions(args, {}, 'mcp');
  const location = dataLocationOf(values);
  try {
    // A missing directory is not created here: serveStdio says there is no database in it.
    if (!location.database && existsSync(location.dataDir)) secureDataDir(location.dataDir, { tighten: false });
    await serveStdio(location, process.env[TOKEN_VARIABLE], started);
  } catch (error) {
    if (error instanceof DataDirRefusal) throw new Error(`mcp: ${error.message}`);
    if (error instanceof StdioRefusal) {
      const message = `mcp: ${error.message}`;
      throw error.usage ? new UsageError(message) : new Error(message);
    }
    throw error;
  }
  // Nothing else should keep the process alive once the assistant has closed the pipe.
  process.exit(0);
}
