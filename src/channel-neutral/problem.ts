// The one formatter of errors for REST: application/problem+json (RFC 9457) with a stable
// `code`. Only the AppError's public members are sent; its internal reason never is.
import type { FastifyReply } from 'fastify';
import { AppError, INTERNAL_ERROR_SENTENCE } from '../core/errors.js';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  permission?: string;
  errors?: { field: string; message: string }[];
  operation_id?: string;
}

export function problemOf(error: AppError): ProblemDocument {
  const problem: ProblemDocument = {
    type: `urn:teaminfra:problem:${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.code === 'internal' ? INTERNAL_ERROR_SENTENCE : error.detail,
    code: error.code,
  };
  if (error.extras.permission) problem.permission = error.extras.permission;
  if (error.extras.errors) problem.errors = error.extras.errors;
  if (error.extras.operationId) problem.operation_id = error.extras.operationId;
  return problem;
}

/**
 * What a bearer challenge (RFC 6750 §3) says besides the error: where the protected resource
 * metadata of the endpoint is (RFC 9728), so that a client can find the authorization server and
 * sign in, and the scope to ask for there (MCP authorization: the scope for a first sign-in in a
 * 401, the scopes a refused call needs in a 403 insufficient_scope, to step up).
 */
export interface BearerChallenge {
  hadBearer: boolean;
  resourceMetadata?: string;
  scope?: string;
}

export function sendProblem(reply: FastifyReply, error: AppError, challenge: BearerChallenge = { hadBearer: true }): FastifyReply {
  const header = bearerChallengeOf(error, challenge);
  if (header) reply.header('WWW-Authenticate', header);
  if (error.extras.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.extras.retryAfterSeconds));
  return reply.code(error.status).type('application/problem+json').send(JSON.stringify(problemOf(error)));
}

/** The WWW-Authenticate of a refused token (401), or of a refusal a sign-in with more scope can lift (403). */
function bearerChallengeOf(error: AppError, challenge: BearerChallenge): string | undefined {
  const quoted = (text: string) => `"${text.replace(/["\\]/g, "'")}"`;
  const parts = ['Bearer realm="teaminfra"'];
  if (error.code === 'invalid_token') {
    // RFC 6750: no error code when the request carried no token at all.
    if (challenge.hadBearer) parts.push('error="invalid_token"', `error_description=${quoted(error.detail)}`);
  } else if (error.code === 'missing_permission' && challenge.scope) {
    parts.push('error="insufficient_scope"', `error_description=${quoted(error.detail)}`);
  } else {
    return undefined;
  }
  if (challenge.scope) parts.push(`scope=${quoted(challenge.scope)}`);
  if (challenge.resourceMetadata) parts.push(`resource_metadata=${quoted(challenge.resourceMetadata)}`);
  return parts.join(', ');
}
