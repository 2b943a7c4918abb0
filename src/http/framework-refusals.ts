// What Fastify and Node's HTTP parser refuse before any route of ours runs (bad JSON, sizes,
// malformed paths, malformed HTTP), turned into the same problem documents as everything else,
// so a client never meets a second error format. Their own messages echo the request back and
// are never sent.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, INTERNAL_ERROR_SENTENCE } from '../core/errors.js';
import { problemOf, sendProblem } from '../channel-neutral/problem.js';

/** The longest path parameter the router accepts (Fastify's default); ids are far shorter. */
export const MAX_PATH_PARAMETER_LENGTH = 100;

/** Maps what Fastify refuses while reading a request (bad JSON, size, media type) to problems. */
export function fromFastifyError(error: FastifyError): AppError {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('validation_failed', 'The request body is not valid JSON.', {
        errors: [{ field: '(body)', message: 'Send a JSON object with "Content-Type: application/json".' }],
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than this API accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('unsupported_media_type', 'Send the request body as JSON with "Content-Type: application/json".');
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new AppError('validation_failed', 'The request could not be read.', { errors: [{ field: '(request)', message: 'Malformed request.' }] });
  }
  return new AppError('internal', INTERNAL_ERROR_SENTENCE, {}, error.message, { cause: error });
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before choosing a route. Without this
 * hook Fastify answers in a JSON shape of its own that repeats the whole path.
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return sendProblem(reply, new AppError('validation_failed', 'The request path is not valid.', {
        errors: [{ field: '(path)', message: 'It contains a malformed percent-encoding (such as "%E0%A4%A").' }],
      }));
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return sendProblem(reply, new AppError('uri_too_long', `A part of the request path is longer than this API accepts (${MAX_PATH_PARAMETER_LENGTH} characters at most).`));
  }
  request.log.error({ err: error }, 'router error');
  return sendProblem(reply, new AppError('internal', INTERNAL_ERROR_SENTENCE));
}

/**
 * RFC 9112 requires a Host header on HTTP/1.1. Node's own check answers an empty 400, so it is
 * turned off (`requireHostHeader: false`) and done here instead, with a problem document.
 */
export function refuseMissingHost(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (request.raw.httpVersion !== '1.1' || request.headers.host !== undefined) return undefined;
  return sendProblem(reply, new AppError('validation_failed', 'The request has no Host header, which HTTP/1.1 requires.', {
    errors: [{ field: 'Host', message: 'Send the name (and port) of this server.' }],
  }));
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser cannot read at all (malformed
 * request line or headers, headers too large, a request too slow to arrive). No reply object
 * exists yet, so the answer is written to the socket, which is then closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const problem = problemOf(clientErrorOf(error));
    const body = JSON.stringify(problem);
    socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

function clientErrorOf(error: NodeJS.ErrnoException): AppError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('request_timeout', 'The request took too long to arrive.');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new AppError('headers_too_large', 'The request headers are larger than this server accepts.');
  return new AppError('validation_failed', 'The request could not be read as HTTP.', {
    errors: [{ field: '(request)', message: 'Malformed request line or headers.' }],
  });
}
