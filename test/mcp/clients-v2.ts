// The SDK's v2 Client (@modelcontextprotocol/client) pinned to MCP 2026-07-28: no initialize, a
// server/discover probe, the version and capabilities in every request's _meta. Connected the
// same two ways as the 2025-era client of clients.ts (the HTTP and stdio entries of
// mcp.config.json), and, when asked, declaring the tasks extension on every request.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readConfig, stdioParameters, TOKEN_PLACEHOLDER } from './clients.js';

export const MODERN = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface ModernConnected {
  client: Client;
  close(): Promise<void>;
}

function newClient(tasks: boolean): Client {
  return new Client(
    { name: 'teaminfra-tests-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } }, capabilities: tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {} },
  );
}

export async function connectModernHttp(baseUrl: string, token: string, options: { tasks?: boolean } = {}): Promise<ModernConnected> {
  const entry = Object.values(readConfig().mcpServers).find((candidate) => candidate.type === 'http') as { url: string; headers: Record<string, string> };
  const headers = Object.fromEntries(Object.entries(entry.headers).map(([name, value]) => [name, value.replace(TOKEN_PLACEHOLDER, token)]));
  const client = newClient(options.tasks ?? false);
  await client.connect(new StreamableHTTPClientTransport(new URL(new URL(entry.url).pathname, baseUrl), { requestInit: { headers } }));
  return { client, close: () => client.close() };
}

/** `teaminfra mcp` started as mcp.config.json says, spoken to by the v2 client. */
export async function connectModernStdio(dataDir: string, token: string, options: { tasks?: boolean; databaseUrl?: string } = {}): Promise<ModernConnected> {
  const client = newClient(options.tasks ?? false);
  await client.connect(new StdioClientTransport({ ...stdioParameters(dataDir, token, options.databaseUrl), stderr: 'ignore' }));
  return { client, close: () => client.close() };
}
