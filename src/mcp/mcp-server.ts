// The one seam through which MCP tools exist. A low-level SDK Server with exactly two handlers:
// tools/list (the catalog, filtered to what the token may attempt) and tools/call (dispatched
// through invoke()). Nothing else registers a tool, and the bearer is checked again on every
// request, so an access change or a revocation applies to the next request of an open session.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { AppError, toAppError } from '../core/errors.js';
import { admit, invoke, mayAttempt, type CoreDeps, type Credentials } from '../core/invoke.js';
import type { Principal } from '../core/principal.js';
import { packageRoot } from '../package-root.js';
import type { ToolCatalog } from './tool-definitions.js';
import { errorResult, protocolErrorOf, successResult } from './tool-results.js';
import { unknownToolRefusal } from './unknown-tool.js';
import { screenRequests } from './request-screen.js';
import { awaitOperation, isQueuedOperation, waitOptionsFromEnv } from './await-operation.js';
import { awaitDecision, isPendingDecision } from './await-decision.js';

const VERSION = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

const INSTRUCTIONS =
  'Tools to read and operate the ERP services and servers of one team, limited to what this API token may do: ' +
  'tools/list shows only the tools it may call. Errors carry a stable code and a sentence to show the person. ' +
  'API tokens are managed on the API Tokens page of the panel, by owners and admins, never through these tools.';

// The Server builds an Ajv instance when given none; we never ask the client for elicitation,
// so one shared validator spares each per-request server that cost.
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * One server per bearer: per request over HTTP, per process over stdio. Over stdio the bearer is
 * a value to check on every request, never a verdict: admit() and invoke() look it up each time.
 * Over HTTP each POST is one request, admitted once before its body is read; `admitted` carries
 * that answer so that its calls do not look the token up a second time.
 */
export function createMcpServer(tools: ToolCatalog, deps: CoreDeps, bearer: string | undefined, admitted?: Principal): Server {
  const credentials: Credentials = { bearer, channel: 'mcp', admitted };
  const server = new Server(
    { name: 'teaminfra', title: 'teaminfra', version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: sharedValidator },
  );

  server.setRequestHandler(ListToolsRequestSchema, async (): Promise<ListToolsResult> => {
    const principal = await admit(deps, credentials, 'tools/list').catch((thrown: unknown) => {
      throw protocolErrorOf(toAppError(thrown));
    });
    // Hiding is a courtesy to the model, not enforcement: every call goes through invoke() anyway.
    return { tools: tools.definitions.filter((definition) => mayAttempt(principal, definition.capability)).map((d) => d.tool) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const definition = tools.find(request.params.name);
    if (!definition) return refuseUnknownTool(request.params.name, credentials, deps);
    try {
      const output = await invoke(definition.capability, request.params.arguments ?? {}, credentials, deps);
      const progressToken = (request.params as { _meta?: { progressToken?: string | number } })._meta?.progressToken;
      if (isPendingDecision(output)) {
        return successResult(await awaitDecision(deps.db, output, {
          ...waitOptionsFromEnv(),
          onChange: progressToken === undefined ? undefined : (state, step) => extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, message: `Decision ${output.id} is ${state}.` },
          }),
        }));
      }
      if (definition.capability.http.status !== 202 || !isQueuedOperation(output)) return successResult(output);
      return successResult(await awaitOperation(deps.db, output, {
        ...waitOptionsFromEnv(),
        onChange: progressToken === undefined ? undefined : (state, step) => extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: step, message: `Operation ${output.id} is ${state}.` },
        }),
      }));
    } catch (thrown) {
      return errorResult(toAppError(thrown));
    }
  });

  return server;
}

/**
 * Connects a server to a transport with the request screen in between, so that a malformed
 * request is answered -32602 with a sentence (request-screen.ts). Every transport connects here.
 */
export async function connectMcpServer(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  screenRequests(transport);
}

/** The token is checked first, so an unknown or revoked token learns nothing about tool names. */
async function refuseUnknownTool(name: string, credentials: Credentials, deps: CoreDeps): Promise<CallToolResult> {
  try {
    await admit(deps, credentials, 'tools/call');
  } catch (thrown) {
    return errorResult(toAppError(thrown));
  }
  const refusal = unknownToolRefusal(name);
  if (refusal instanceof AppError) return errorResult(refusal);
  throw refusal;
}
