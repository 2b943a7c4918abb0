// `teaminfra mcp`: the same tools over stdio, for an assistant that starts this process itself,
// against the local data directory (or the PostgreSQL database given), with the token from
// TEAMINFRA_TOKEN. The token is checked before anything is served (a bad one exits non-zero with
// a sentence on stderr), and again on every request, like over HTTP. stdout carries protocol
// only: everything else goes to stderr.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveStdio as serveMcpStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { catalog } from '../../tools/index.js';
import { openCore, type OpenCore } from '../core-deps.js';
import { toAppError } from '../core/errors.js';
import { admit } from '../core/invoke.js';
import { DATABASE_FILE, type DatabaseOptions } from '../db/connect.js';
import { createMcpServer } from './mcp-server.js';
import { PREBUILT_TOOLS } from './prebuilt-tools.js';
import { buildToolCatalog } from './tool-definitions.js';
import { screenedLines } from './stdio-framing.js';

export const TOKEN_VARIABLE = 'TEAMINFRA_TOKEN';

/** A reason not to start, said in one sentence; `usage` when the command was called wrongly. */
export class StdioRefusal extends Error {
  constructor(message: string, readonly usage = false) {
    super(message);
  }
}

/**
 * Serves until stdin closes; rejects with a StdioRefusal before serving anything when it cannot start.
 * `started` is called once the first tools/list answer is written: the start is then done.
 */
export async function serveStdio(location: { dataDir: string; database?: DatabaseOptions }, bearer: string | undefined,
  started?: () => void): Promise<void> {
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
  await serveUntilClosed(app, bearer.trim(), started);
}

/**
 * The SDK's stdio entry serves both eras: the first message of the connection decides it
 * (initialize for 2025-era clients, a request carrying its version in `_meta` for 2026-07-28),
 * and the factory builds our one server for that era.
 */
async function serveUntilClosed(app: OpenCore, bearer: string, started?: () => void): Promise<void> {
  const tools = buildToolCatalog(catalog, PREBUILT_TOOLS);
  // Lines the SDK would drop or cannot serve are answered by the screen (stdio-framing.ts).
  const lines = process.stdin.pipe(screenedLines((error) => { void wire.send(error).catch(() => undefined); }));
  const wire = new StdioServerTransport(lines, process.stdout);
  if (started) afterFirstToolList(wire, started);
  const handle = serveMcpStdio(({ era }) => createMcpServer(tools, app, bearer, { era }), {
    transport: wire,
    onerror: (error) => console.error(`teaminfra mcp: ${error.message}`),
  });
  // The assistant closing the pipe means "stop".
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await handle.close();
  await app.close();
}

/**
 * Calls `started` once, as soon as the first tools/list answer has been written: at once, not in
 * a later turn, which the assistant closing the pipe could beat to the process's exit.
 */
function afterFirstToolList(wire: StdioServerTransport, started: () => void): void {
  const send = wire.send.bind(wire);
  const sendUntilToolList: typeof wire.send = async (message) => {
    await send(message);
    const result = 'result' in message ? (message.result as { tools?: unknown }) : undefined;
    if (!Array.isArray(result?.tools)) return;
    wire.send = send;
    started();
  };
  wire.send = sendUntilToolList;
}

/** A stray console.log from any module would corrupt the protocol stream; send it to stderr. */
function keepStdoutForProtocol(): void {
  const toStderr = (...values: unknown[]) => console.error(...values);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
