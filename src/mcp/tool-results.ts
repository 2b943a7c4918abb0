// The one formatter of MCP answers. A capability's output becomes structuredContent plus a JSON
// text rendering; an AppError becomes an isError result whose text carries the same code and
// sentence as the REST problem document, and whose _meta carries that very document.
//
// Why the problem is in _meta and not in structuredContent: SDK 1.x clients validate
// structuredContent against the tool's outputSchema even on isError results
// (typescript-sdk issue #1943), so a problem there makes the client throw "Structured content
// does not match the tool's output schema" and the caller never sees our sentence.
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import type { AppError } from '../core/errors.js';
import { problemOf, type ProblemDocument } from '../channel-neutral/problem.js';

export const PROBLEM_META_KEY = 'teaminfra/problem';

export function successResult(output: unknown): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(output) }],
    structuredContent: output as Record<string, unknown>,
  };
}

export function errorResult(error: AppError): CallToolResult {
  const problem = problemOf(error);
  return {
    isError: true,
    content: [{ type: 'text', text: sentenceOf(problem) }],
    _meta: { [PROBLEM_META_KEY]: problem },
  };
}

/**
 * For requests that are not tool calls (tools/list): a JSON-RPC error, since there is no result
 * to mark isError. Over HTTP the bearer is checked before the SDK sees the request, so this is
 * reached over stdio, when the token is revoked or changed while the assistant runs.
 */
export function protocolErrorOf(error: AppError): ProtocolError {
  const problem = problemOf(error);
  return new ProtocolError(ProtocolErrorCode.InvalidRequest, sentenceOf(problem), problem);
}

/** `code: sentence`, then one line per failing field, so a model can correct its arguments. */
function sentenceOf(problem: ProblemDocument): string {
  const fields = problem.errors?.map((entry) => `\n- ${entry.field}: ${entry.message}`).join('') ?? '';
  return `${problem.code}: ${problem.detail}${fields}`;
}
