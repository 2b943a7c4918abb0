// Baseline for the stdio start-up with the same SDK: a process that loads
// @modelcontextprotocol/server, opens nothing else (no database, no token check, no catalog), and
// serves over stdio with the SDK's serveStdio a low-level Server whose tools/list answers the
// exact tools teaminfra listed. The floor of "answer tools/list with this SDK": what is above it
// in `teaminfra mcp` is ours, what is between it and the bare Node process (stdio-floor.ts) is
// the SDK's own start (loading it and zod, which its schemas are written in).
// argv: <answers.json> holding { initialize, toolsList } (the JSON-RPC results, as sent)
import { readFileSync } from 'node:fs';
import module from 'node:module';
import type { ListToolsResult } from '@modelcontextprotocol/server';

// As `teaminfra mcp` does: the compiled code of the SDK is kept on disk for the next start, and
// zod parses without compiling a parser per object schema (src/cli/interpreted-zod.ts), set
// before the SDK builds any schema. No top-level await: the bench bundles this file as
// CommonJS, as the build bundles `teaminfra mcp`, to run it with the code cache of its start.
async function serveFixedList(): Promise<void> {
  (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  (await import('zod')).config({ jitless: true });
  const { Server } = await import('@modelcontextprotocol/server');
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');

  const file = process.argv[2];
  if (!file) throw new Error('usage: stdio-sdk-floor.js <answers.json>');
  const answers = JSON.parse(readFileSync(file, 'utf8')) as { toolsList: ListToolsResult };

  serveStdio(() => {
    const server = new Server({ name: 'floor', version: '1' }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler('tools/list', async () => answers.toolsList);
    return server;
  });
}

void serveFixedList();
