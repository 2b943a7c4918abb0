// MCP test clients: the SDK's own Client over streamable HTTP and over stdio (launched from the
// stdio entry of mcp.config.json, placeholders filled in), plus raw HTTP for what a well-behaved
// client never sends.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ProblemDocument } from '../../src/channel-neutral/problem.js';
import { PROBLEM_META_KEY } from '../../src/mcp/tool-results.js';
import { packageRoot } from '../../src/package-root.js';

export const CONFIG_FILE = join(packageRoot, 'mcp.config.json');
export const TOKEN_PLACEHOLDER = "<API token accepted by MCP, from the panel's API Tokens page>";
export const ROOT_PLACEHOLDER = '/path/to/teaminfra';

interface StdioEntry { type: 'stdio'; command: string; args: string[]; env: Record<string, string> }
interface HttpEntry { type: 'http'; url: string; headers: Record<string, string> }
export interface McpConfig { mcpServers: Record<string, StdioEntry | HttpEntry> }

export function readConfig(): McpConfig {
  return JSON.parse(readFileSync(CONFIG_FILE, 'utf8')) as McpConfig;
}

function entryOf<T extends StdioEntry | HttpEntry>(type: T['type']): T {
  const entries = Object.values(readConfig().mcpServers).filter((entry) => entry.type === type);
  if (entries.length !== 1) throw new Error(`mcp.config.json should have exactly one ${type} entry; it has ${entries.length}.`);
  return entries[0] as T;
}

export interface Connected<T> {
  client: Client;
  transport: T;
  close(): Promise<void>;
}

function newClient(): Client {
  return new Client({ name: 'teaminfra-tests', version: '1.0.0' });
}

/** Connects with the streamable-HTTP entry of mcp.config.json, pointed at this server. */
export async function connectHttp(baseUrl: string, token: string, sessionId?: string): Promise<Connected<StreamableHTTPClientTransport>> {
  const entry = entryOf<HttpEntry>('http');
  const url = new URL(new URL(entry.url).pathname, baseUrl);
  const headers = Object.fromEntries(Object.entries(entry.headers).map(([name, value]) => [name, value.replace(TOKEN_PLACEHOLDER, token)]));
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers }, ...(sessionId ? { sessionId } : {}) });
  const client = newClient();
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/**
 * Starts `teaminfra mcp` exactly as the stdio entry of mcp.config.json says, placeholders filled
 * in; with `--database-url` added when the test server runs on PostgreSQL.
 */
export function stdioTransport(dataDir: string, token: string | undefined, databaseUrl?: string): StdioClientTransport {
  return new StdioClientTransport({ ...stdioParameters(dataDir, token, databaseUrl), stderr: 'pipe' });
}

/** The command, arguments and environment of the stdio entry, placeholders filled in (for either SDK's client). */
export function stdioParameters(dataDir: string, token: string | undefined, databaseUrl?: string) {
  const entry = entryOf<StdioEntry>('stdio');
  const fill = (value: string) => value.replace(`${ROOT_PLACEHOLDER}/data`, dataDir).replace(ROOT_PLACEHOLDER, packageRoot);
  const env = Object.fromEntries(Object.entries(entry.env).map(([name, value]) => [name, value.replace(TOKEN_PLACEHOLDER, token ?? '')]));
  return {
    command: entry.command === 'node' ? process.execPath : entry.command,
    args: [...entry.args.map(fill), ...(databaseUrl ? ['--database-url', databaseUrl] : [])],
    env,
  };
}

export async function connectStdio(
  dataDir: string, token: string, databaseUrl?: string,
): Promise<Connected<StdioClientTransport> & { stderr: () => string }> {
  const transport = stdioTransport(dataDir, token, databaseUrl);
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => { stderr += chunk; });
  const client = newClient();
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** The REST problem document: MCP errors carry the very same one. */
export type Problem = ProblemDocument;

/** The problem document an isError result carries, exactly as REST would send it. */
export function problemIn(result: unknown): Problem | undefined {
  return (result as CallToolResult)._meta?.[PROBLEM_META_KEY] as Problem | undefined;
}

export function textOf(result: unknown): string {
  const [first] = (result as CallToolResult).content;
  return first?.type === 'text' ? first.text : '';
}

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

/** A raw request with node:http, which (unlike fetch) lets a test set Host like a browser would. */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  const url = new URL(options.path ?? '/mcp', baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers ?? {} }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => { text += chunk; });
      response.on('end', () => resolve({
        status: response.statusCode ?? 0, headers: response.headers, text, json: () => JSON.parse(text),
      }));
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** One JSON-RPC request over raw HTTP with a bearer, answered as JSON. */
export function rpc(baseUrl: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return rawRequest(baseUrl, {
    headers: { ...MCP_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const INITIALIZE = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
