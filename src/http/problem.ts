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
 * `resourceMetadata`: where the protected resource metadata of the endpoint is (RFC 9728), named
 * in the 401 challenge so that a client can find the authorization server and sign in.
 */
export function sendProblem(reply: FastifyReply, error: AppError, hadBearer = true, resourceMetadata?: string): FastifyReply {
  if (error.code === 'invalid_token') {
    // RFC 6750: no error code when the request carried no token at all.
    const challenge = ['Bearer realm="teaminfra"'];
    if (hadBearer) challenge.push('error="invalid_token"', `error_description="${error.detail.replace(/"/g, "'")}"`);
    if (resourceMetadata) challenge.push(`resource_metadata="${resourceMetadata}"`);
    reply.header('WWW-Authenticate', challenge.join(', '));
  }
  if (error.extras.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.extras.retryAfterSeconds));
  return reply.code(error.status).type('application/problem+json').send(JSON.stringify(problemOf(error)));
}
