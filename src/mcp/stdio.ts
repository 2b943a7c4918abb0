// `teaminfra mcp`: the same tools over stdio, for an assistant that starts this process itself,
// against the local data directory (or the PostgreSQL database given), with the token from
// TEAMINFRA_TOKEN. The token is checked before anything is served (a bad one exits non-zero with
// a sentence on stderr), and again on every request, like over HTTP. stdout carries protocol
// only: everything else goes to stderr.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { catalog } from '../../tools/index.js';
import { openCore, type OpenCore } from '../core-deps.js';
import { toAppError } from '../core/errors.js';
import { admit } from '../core/invoke.js';
import { DATABASE_FILE, type DatabaseOptions } from '../db/connect.js';
import { connectMcpServer, createMcpServer } from './mcp-server.js';
import { buildToolCatalog } from './tool-definitions.js';

export const TOKEN_VARIABLE = 'TEAMINFRA_TOKEN';

/** A reason not to start, said in one sentence; `usage` when the command was called wrongly. */
export class StdioRefusal extends Error {
  constructor(message: string, readonly usage = false) {
    super(message);
  }
}

/** Serves until stdin closes; rejects with a StdioRefusal before serving anything when it cannot start. */
export async function serveStdio(location: { dataDir: string; database?: DatabaseOptions }, bearer: string | undefined): Promise<void> {
  const { dataDir, database } = location;
  keepStdoutForProtocol();
  if (!bearer || bearer.trim() === '') {
    throw new StdioRefusal(`${TOKEN_VARIABLE} is not set. Set it to an API token accepted by the MCP server ` +
      '(created on the API Tokens page of the panel, by an owner or admin).', true);
  }
  // Opening a missing database would create an empty one and then call the token unknown.
  if (!database && !existsSync(join(dataDir, DATABASE_FILE))) {
    throw new StdioRefusal(`There is no teaminfra database in ${dataDir}. Pass the data directory of the server with --data-dir.`, true);
  }
  const app = openCore(dataDir, database, (error, capability) =>
    console.error(JSON.stringify({ level: 'error', msg: 'internal error', capability, reason: error.internalReason })));
  try {
    await app.db.ready();
  } catch (error) {
    await app.close();
    throw new StdioRefusal(`The database cannot be used: ${(error as Error).message}`);
  }
  try {
    await admit(app, { bearer: bearer.trim(), channel: 'mcp' }, 'mcp');
  } catch (thrown) {
    await app.close();
    throw new StdioRefusal(`The token in ${TOKEN_VARIABLE} was refused: ${toAppError(thrown).detail}`);
  }
  await serveUntilClosed(app, bearer.trim());
}

async function serveUntilClosed(app: OpenCore, bearer: string): Promise<void> {
  const server = createMcpServer(buildToolCatalog(catalog), app, bearer);
  const transport = new StdioServerTransport();
  server.onerror = (error) => console.error(`teaminfra mcp: ${error.message}`);
  const closed = new Promise<void>((resolve) => { server.onclose = resolve; });
  // The SDK transport does not stop when stdin ends; the assistant closing the pipe means "stop".
  process.stdin.once('end', () => void server.close());
  process.once('SIGINT', () => void server.close());
  process.once('SIGTERM', () => void server.close());
  await connectMcpServer(server, transport);
  await closed;
  await app.close();
}

/** A stray console.log from any module would corrupt the protocol stream; send it to stderr. */
function keepStdoutForProtocol(): void {
  const toStderr = (...values: unknown[]) => console.error(...values);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
