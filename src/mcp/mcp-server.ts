// The one seam through which MCP tools exist, for every protocol version we serve. A low-level
// SDK Server (@modelcontextprotocol/server, v2) with exactly these handlers: tools/list (the
// catalog, filtered to what the token may attempt), tools/call (dispatched through invoke()),
// and the task methods (task-handlers.ts), which read a task through invoke() too. Nothing else
// registers a tool, and the bearer is checked again on every request, so an access change or a
// revocation applies to the next request of an open conversation.
// The same server answers both protocol eras: `legacy` (2025-11-25 and older, opened by
// initialize) and `modern` (2026-07-28, a version and capabilities on every request).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server, type CallToolResult, type ListToolsResult, type ServerCapabilities, type Transport } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { AppError, toAppError } from '../core/errors.js';
import { admit, invoke, mayAttempt, type CoreDeps, type Credentials } from '../core/invoke.js';
import type { Principal } from '../core/principal.js';
import { packageRoot } from '../package-root.js';
import type { ToolCatalog } from './tool-definitions.js';
import { errorResult, protocolErrorOf, successResult } from './tool-results.js';
import { unknownToolRefusal } from './unknown-tool.js';
import { screenRequests } from './request-screen.js';
import { answerLongAction, isLongActionOutput, TASKS_EXTENSION } from './long-actions.js';
import type { ProtocolEra } from './protocol-era.js';
import { registerTaskHandlers } from './task-handlers.js';

const VERSION = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

const INSTRUCTIONS =
  'Tools to read and operate the ERP services and servers of one team, limited to what this API token may do: ' +
  'tools/list shows only the tools it may call. Errors carry a stable code and a sentence to show the person. ' +
  'A long action (start, stop, redeploy, create, delete, backup, restore, copy) answers with its operation once it ends, ' +
  'or still running with its id after a time limit: follow it with get_operation. It is refused (conflict) while another ' +
  'operation on the same service is in progress. Lists are paginated: pass next_cursor back as cursor. ' +
  'API tokens are managed on the API Tokens page of the panel, by owners and admins, never through these tools.';

// The Server builds a JSON Schema validator when given none; we never ask the client for
// elicitation, so one shared validator spares each per-request server that cost.
const sharedValidator = new AjvJsonSchemaValidator();

/** What each era is told we offer: tools, and long actions as tasks in that era's vocabulary. */
const CAPABILITIES: Record<ProtocolEra, ServerCapabilities> = {
  // 2025-11-25: the (experimental) tasks capability, for task-augmented tools/call only.
  legacy: { tools: { listChanged: false }, tasks: { requests: { tools: { call: {} } } } } as ServerCapabilities,
  // 2026-07-28: the tasks extension.
  modern: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } } as ServerCapabilities,
};

/** A Server whose every transport gets the request screen (request-screen.ts) between it and the handlers. */
class ScreenedServer extends Server {
  constructor(info: ConstructorParameters<typeof Server>[0], options: ConstructorParameters<typeof Server>[1], private readonly era: ProtocolEra) {
    super(info, options);
  }

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    screenRequests(transport, this.era);
  }
}

export interface McpServerOptions {
  /** The era this instance serves; legacy when it is not known yet (a stdio connection before its first message). */
  era?: ProtocolEra;
  /**
   * What admit() answered for this bearer earlier in this same HTTP request (admitted before its
   * body was read), so that its calls do not look the token up a second time.
   */
  admitted?: Principal;
}

/**
 * One server per bearer: per request over HTTP, per connection over stdio. Over stdio the bearer
 * is a value to check on every request, never a verdict: admit() and invoke() look it up each time.
 */
export function createMcpServer(tools: ToolCatalog, deps: CoreDeps, bearer: string | undefined, options: McpServerOptions = {}): Server {
  const era = options.era ?? 'legacy';
  const credentials: Credentials = { bearer, channel: 'mcp', admitted: options.admitted };
  const server = new ScreenedServer(
    { name: 'teaminfra', title: 'teaminfra', version: VERSION },
    { capabilities: CAPABILITIES[era], instructions: INSTRUCTIONS, jsonSchemaValidator: sharedValidator },
    era,
  );

  server.setRequestHandler('tools/list', async (): Promise<ListToolsResult> => {
    const principal = await admit(deps, credentials, 'tools/list').catch((thrown: unknown) => {
      throw protocolErrorOf(toAppError(thrown));
    });
    // Hiding is a courtesy to the model, not enforcement: every call goes through invoke() anyway.
    const shown = tools.definitions.filter((definition) => mayAttempt(principal, definition.capability));
    return { tools: shown.map((definition) => (era === 'legacy' ? definition.legacyTool : definition.tool)) };
  });

  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const definition = tools.find(request.params.name);
    if (!definition) return refuseUnknownTool(request.params.name, credentials, deps);
    try {
      const output = await invoke(definition.capability, request.params.arguments ?? {}, credentials, deps);
      if (!isLongActionOutput(definition.capability, output)) return successResult(output);
      return await answerLongAction(definition.capability, output, {
        era, deps, request, ctx,
        canRead: (kind) => tools.find(kind === 'decision' ? 'get_decision' : 'get_operation') !== undefined,
        principal: () => admit(deps, credentials, 'tools/call'),
      }) ?? successResult(output);
    } catch (thrown) {
      return errorResult(toAppError(thrown));
    }
  });

  registerTaskHandlers(server, { era, tools, deps, credentials });
  return server;
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
