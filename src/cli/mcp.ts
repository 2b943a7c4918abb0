// `teaminfra mcp [--data-dir DIR] [--database-url URL]`: MCP over stdio, token from TEAMINFRA_TOKEN.
import { serveStdio, StdioRefusal, TOKEN_VARIABLE } from '../mcp/stdio.js';
import { dataLocationOf, parseOptions } from './options.js';
import { UsageError } from './usage.js';

export async function runMcpStdio(args: string[]): Promise<void> {
  const values = parseOptions(args, {}, 'mcp');
  try {
    await serveStdio(dataLocationOf(values), process.env[TOKEN_VARIABLE]);
  } catch (error) {
    if (error instanceof StdioRefusal) {
      const message = `mcp: ${error.message}`;
      throw error.usage ? new UsageError(message) : new Error(message);
    }
    throw error;
  }
  // Nothing else should keep the process alive once the assistant has closed the pipe.
  process.exit(0);
}
