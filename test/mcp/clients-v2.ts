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

/**
 * The `_meta` a 2026-07-28 request carries. Used by the tests that start a task: the v2 Client
 * (2.4.0) does not implement the tasks extension yet (it refuses a `resultType: "task"` answer,
 * typescript-sdk#2189), so those requests are written by hand, as a client that does would send them.
 */
export function modernMeta(tasks: boolean): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'teaminfra-tests-raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
  };
}

export function modernToolCall(id: number, name: string, args: Record<string, unknown>, tasks = true) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: modernMeta(tasks) } };
}

/** One 2026-07-28 request over HTTP, with the standard headers; the JSON-RPC response. */
export async function modernHttpRequest(baseUrl: string, token: string, message: { method: string; params: { name?: string } }): Promise<any> {
  const response = await fetch(new URL('/mcp', baseUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN, 'mcp-method': message.method, ...(message.params.name ? { 'mcp-name': message.params.name } : {}),
    },
    body: JSON.stringify(message),
  });
  return response.json();
}

/** One 2026-07-28 request to a `teaminfra mcp` started for it; the JSON-RPC response, then the process ends. */
export async function modernStdioRequest(dataDir: string, token: string, message: { id: number }, databaseUrl?: string): Promise<any> {
  const { spawn } = await import('node:child_process');
  const { command, args, env } = stdioParameters(dataDir, token, databaseUrl);
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    return await new Promise((resolve, reject) => {
      let buffered = '';
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`teaminfra mcp exited (${code}) before answering`)));
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        for (const line of buffered.split('\n').slice(0, -1)) {
          const parsed = JSON.parse(line) as { id?: number };
          if (parsed.id === message.id) resolve(parsed);
        }
        buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
      });
      child.stdin.write(JSON.stringify(message) + '\n');
    });
  } finally {
    child.kill();
  }
}
