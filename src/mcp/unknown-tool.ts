// What a call to a tool that is not in the catalog gets. Token management exists only in the
// panel, so an assistant that guesses a token tool (create_token, revoke_api_token, ...) is told
// where tokens are managed instead of a bare "unknown tool": the sentence is for the person.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { AppError } from '../core/errors.js';

/** The same rule the catalog applies at load time: anything named after tokens. */
const ABOUT_TOKENS = /token/i;

export const TOKEN_MANAGEMENT_SENTENCE =
  'API tokens cannot be created, changed, listed or revoked through MCP or the API. ' +
  'Tokens are managed on the API Tokens page of the panel (Developer > API Tokens), by owners and admins.';

/** An AppError (an isError result the model reads) for token tools; a JSON-RPC error otherwise. */
export function unknownToolRefusal(name: string): AppError | ProtocolError {
  if (ABOUT_TOKENS.test(name)) return new AppError('token_management_not_available', TOKEN_MANAGEMENT_SENTENCE);
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown tool ${JSON.stringify(name.slice(0, 100))}. Call tools/list to see the tools this token may use.`,
  );
}
