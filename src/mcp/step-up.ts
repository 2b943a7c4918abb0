// Step-up over MCP (the MCP authorization specification's scope challenge). An assistant that
// signed in with OAuth can ask the person for more access; so when its token lacks the
// permission a tool call needs, /mcp answers that call with HTTP 403 and
// `WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp services:operate", ...`
// instead of an isError result: its client then sends the person to the consent page, where
// that permission is ticked, and retries with the new token.
// Only for tokens from an assistant sign-in, and only for a request that is one tools/call: a
// token made on the panel cannot be stepped up by OAuth (its assistant gets the isError result
// with our code and sentence, as over stdio), and a batch has no single call to answer for.
// The rule itself is the core's (permissionRefusal); invoke() applies it again on every call.
import { isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/server';
import type { AppError } from '../core/errors.js';
import { permissionRefusal } from '../core/invoke.js';
import type { Principal } from '../core/principal.js';
import { MCP_SCOPE } from '../oauth/provider-config.js';
import type { ToolCatalog } from './tool-definitions.js';

export interface StepUp {
  refusal: AppError;
  tool: string;
  /** The scopes the call needs, to ask for at the authorization server. */
  scope: string;
}

export function stepUpFor(tools: ToolCatalog, principal: Principal, messages: readonly JSONRPCMessage[]): StepUp | undefined {
  if (principal.source !== 'assistant' || messages.length !== 1) return undefined;
  const [message] = messages as [JSONRPCMessage];
  if (!isJSONRPCRequest(message) || message.method !== 'tools/call') return undefined;
  const name = (message.params as { name?: unknown } | undefined)?.name;
  const definition = typeof name === 'string' ? tools.find(name) : undefined;
  if (!definition) return undefined;
  const refusal = permissionRefusal(principal, definition.capability);
  if (!refusal) return undefined;
  return { refusal, tool: definition.capability.name, scope: `${MCP_SCOPE} ${definition.capability.permission as string}` };
}
