// The OpenAPI 3.1 document, generated from the catalog: the same definitions the routes and
// MCP tools come from, so documentation and enforcement cannot drift apart.
import { PERMISSIONS } from '../auth/permissions.js';
import { answersWithOperation, type Capability } from '../core/capability.js';
import { OperationView } from '../../tools/schemas.js';
import { ERROR_STATUS, type ErrorCode } from '../core/errors.js';
import { envelopeSchema, EVENT_CATALOG } from '../webhooks/event-catalog.js';
import { jsonSchemaOf, type JsonSchema } from '../channel-neutral/json-schema.js';

/**
 * Errors every operation can answer, whatever the capability: the gate's (token, channel, plan,
 * rate, input: every input is a strict object, so an unknown query parameter is refused too),
 * and ours.
 */
const ALWAYS: readonly ErrorCode[] = [
  'invalid_token', 'channel_not_accepted', 'plan_excludes_api', 'rate_limited', 'validation_failed', 'internal',
  // Node's HTTP parser, before any route (framework-refusals.ts): a request too slow to arrive, headers too large.
  'request_timeout', 'headers_too_large',
];

const ERROR_DESCRIPTIONS: Partial<Record<number, string>> = {
  400: 'Invalid input; `errors` names the failing fields.',
  401: 'Missing, malformed, unknown, revoked or expired token.',
  403: 'The token is not allowed to make the request (permission, channel, plan, or creation limit).',
  404: 'Not found, or outside what the token reaches.',
  406: 'The Accept header excludes JSON.',
  408: 'The request took too long to arrive; nothing of it was done.',
  409: 'The target is busy with another operation.',
  413: 'The request body is larger than 64 KiB.',
  414: 'A path parameter is longer than 100 characters.',
  415: 'The request body is not JSON (Content-Type: application/json).',
  429: 'Rate limit reached; see Retry-After.',
  431: 'The request headers are larger than the server accepts (16 KiB).',
  500: 'Our fault: a generic sentence; the cause is in the server log only.',
};

const ref = (kind: 'headers' | 'parameters' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** The rate-limit headers (draft-ietf-httpapi-ratelimit-headers): on every answer past the limiter. */
const RATE_LIMIT_HEADERS = { RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimit-Policy') };

/** Statuses answered before the rate limiter counts the request, so without its headers. */
const REFUSED_BEFORE_LIMITER = new Set([406, 408, 413, 414, 415, 431]);

/** Headers some error statuses always carry. */
const ERROR_HEADERS: Partial<Record<number, JsonSchema>> = {
  401: { 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') },
  429: { 'Retry-After': ref('headers', 'Retry-After') },
};

export function buildOpenApiDocument(catalog: readonly Capability[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const capability of catalog) {
    paths[capability.http.path] ??= {};
    paths[capability.http.path]![capability.http.method.toLowerCase()] = operationOf(capability);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Team Infrastructure API',
      version: '1.0.0',
      description:
        'Manage a team\'s servers and ERP services. Every request carries `Authorization: Bearer <API_TOKEN>`. ' +
        'Tokens are created and managed only on the API Tokens page of the panel (Developer), by owners and admins. ' +
        'Each operation lists the permission it needs as `x-permission`.\n\nPermissions:\n\n' +
        PERMISSIONS.map((permission) => `- \`${permission.id}\`: ${permission.label}`).join('\n'),
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'ERP services' }, { name: 'Servers' }, { name: 'Backups' }, { name: 'Mail catcher' }, { name: 'Operations' },
      { name: 'Decisions' }, { name: 'Token' }, { name: 'Activity' },
    ],
    paths,
    webhooks: webhooksOf(),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A team API token (tinf_...).' } },
      schemas: { Problem: problemSchema() },
      parameters: { IdempotencyKey: idempotencyKeyParameter() },
      headers: sharedHeaders(),
    },
  };
}

function operationOf(capability: Capability): JsonSchema {
  const input = jsonSchemaOf(capability.input, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  const properties = input.properties ?? {};
  const required = new Set(input.required ?? []);
  const pathParams = [...capability.http.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
  const parameters: JsonSchema[] = pathParams.map((name) => ({
    name, in: 'path', required: true, schema: properties[name] ?? { type: 'string' },
  }));
  const bodyLike = capability.http.method === 'POST' || capability.http.method === 'PUT' || capability.http.method === 'PATCH';
  const rest = Object.entries(properties).filter(([name]) => !pathParams.includes(name));
  if (!bodyLike) {
    for (const [name, schema] of rest) {
      parameters.push({ name, in: 'query', required: required.has(name), schema, description: schema.description });
    }
  }
  // Every action answered 202 queues an operation, and the queue honours the key (src/engine/requests/enqueue.ts);
  // request_decision keeps its own (src/decisions/asking.ts).
  // An action held for approval is an operation too, and honours it (src/decisions/approvals.ts).
  if (answersWithOperation(capability) || capability.http.idempotencyKey) parameters.push(ref('parameters', 'IdempotencyKey'));
  const operation: JsonSchema = {
    operationId: capability.name,
    summary: capability.title,
    description: capability.description,
    tags: [tagOf(capability)],
    'x-permission': capability.permission,
    // The permission a destructive input needs besides (set_backup_schedule lowering retention: backups:delete).
    ...(capability.destructiveWhen ? { 'x-destructive-permission': capability.destructiveWhen.permission } : {}),
    parameters,
    responses: responsesOf(capability),
  };
  if (bodyLike) {
    const requiredInBody = [...required].filter((name) => !pathParams.includes(name));
    operation.requestBody = {
      // The server reads a missing body as {}: a body is required only when a field of it is.
      required: requiredInBody.length > 0,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: Object.fromEntries(rest),
            required: requiredInBody,
            additionalProperties: false,
          },
        },
      },
    };
  }
  return operation;
}

function responsesOf(capability: Capability): JsonSchema {
  const responses: JsonSchema = capability.download ? fileResponses(capability) : {
    [String(capability.http.status)]: {
      description: capability.title,
      headers: {
        ...RATE_LIMIT_HEADERS,
        // An accepted long action names its operation, to poll (src/http/rest-adapter.ts).
        ...(capability.http.status === 202 ? { Location: ref('headers', 'Location') } : {}),
      },
      content: { 'application/json': { schema: jsonSchemaOf(capability.output, 'output') } },
    },
    // An action answered at once, held for approval, answers its waiting operation instead.
    ...(capability.approvable && capability.http.status !== 202 ? {
      '202': {
        description: 'Held for approval: the operation that waits for the decision (decision_id).',
        headers: { ...RATE_LIMIT_HEADERS, Location: ref('headers', 'Location') },
        content: { 'application/json': { schema: jsonSchemaOf(OperationView(), 'output') } },
      },
    } : {}),
  };
  const codes = new Set<ErrorCode>([...ALWAYS, ...capability.errors]);
  // A capability open to requesters answers a token without its permission, narrowed, not 403.
  if ((capability.permission !== null && !capability.readableByRequester) || capability.creates) codes.add('missing_permission');
  // A download answers with the file's own type whatever Accept says; everything else is JSON.
  if (!capability.download) codes.add('not_acceptable');
  // The router refuses an over-long path parameter before choosing the route (framework-refusals.ts).
  if (capability.http.path.includes('{')) codes.add('uri_too_long');
  // Fastify reads a body on every method but GET (and HEAD).
  if (capability.http.method !== 'GET') {
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  const statuses = [...new Set([...codes].map((code) => ERROR_STATUS[code]))].sort();
  for (const status of statuses) {
    responses[String(status)] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Error.',
      headers: { ...(REFUSED_BEFORE_LIMITER.has(status) ? {} : RATE_LIMIT_HEADERS), ...ERROR_HEADERS[status] },
      content: { 'application/problem+json': { schema: ref('schemas', 'Problem') } },
    };
  }
  return responses;
}

/** A download answers with the file itself, resumable with Range (src/http/send-file.ts). */
function fileResponses(capability: Capability): JsonSchema {
  const types = [capability.http.produces ?? 'application/octet-stream'].flat();
  const headers = {
    ...RATE_LIMIT_HEADERS,
    'Content-Disposition': { required: true, schema: { type: 'string' }, description: 'attachment; filename="..."' },
    'Repr-Digest': { schema: { type: 'string' }, description: 'sha-256=:<base64>: of the whole file (RFC 9530), when known.' },
    'Content-Length': { schema: { type: 'integer' } },
    'Accept-Ranges': { required: true, schema: { const: 'bytes' }, description: 'Ranges of bytes can be asked for (Range).' },
    ETag: { schema: { type: 'string' }, description: 'A strong validator of the file, for If-Range, when its checksum is known.' },
  };
  const contentRange = (description: string) => ({ required: true, schema: { type: 'string' }, description });
  const body = Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]));
  return {
    '200': { description: `${capability.title} (the whole file)`, headers, content: body },
    '206': {
      description: 'The requested byte range (Range: bytes=start-end).',
      headers: { ...headers, 'Content-Range': contentRange('bytes start-end/size') },
      content: body,
    },
    '416': {
      description: 'The requested range is outside the file; nothing of it is sent.',
      headers: {
        ...RATE_LIMIT_HEADERS, 'Accept-Ranges': headers['Accept-Ranges'], ETag: headers.ETag,
        'Content-Range': contentRange('bytes */size: the size of the file.'),
      },
      content: { 'application/problem+json': { schema: ref('schemas', 'Problem') } },
    },
  };
}

function idempotencyKeyParameter(): JsonSchema {
  return {
    name: 'Idempotency-Key', in: 'header', required: false,
    description: 'A key of your choice (a UUID, say) that makes a retry safe: the same key with the same request returns ' +
      'what the first one made (the operation it queued, the decision it asked); the same key with another request is refused (409).',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
  };
}

/** Headers of the API's answers, declared once and referred to by each response that carries them. */
function sharedHeaders(): JsonSchema {
  return {
    RateLimit: {
      description: 'What is left of the token\'s budget in this window: `"per-token";r=<remaining>;t=<seconds to reset>` ' +
        '(draft-ietf-httpapi-ratelimit-headers). Sent on every answer but those refused before the limiter counts the ' +
        'request (406, 408, 413, 414, 415, 431, a body that is not JSON).',
      schema: { type: 'string' },
    },
    'RateLimit-Policy': {
      description: 'The rate limit: `"per-token";q=<requests>;w=<window seconds>`.',
      schema: { type: 'string' },
    },
    'Retry-After': { required: true, description: 'Seconds until the next window opens.', schema: { type: 'integer', minimum: 1 } },
    'WWW-Authenticate': {
      required: true,
      description: 'The Bearer challenge (RFC 6750), with error="invalid_token" when a token was sent.',
      schema: { type: 'string', pattern: '^Bearer realm="teaminfra"' },
    },
    Location: { required: true, description: 'The operation to poll: /api/operations/{operation_id}.', schema: { type: 'string', format: 'uri-reference' } },
  };
}

function tagOf(capability: Capability): string {
  const segment = capability.http.path.split('/')[2] ?? '';
  if (capability.target.kind === 'backup' || capability.http.path.includes('backups')) return 'Backups';
  if (capability.permission === 'mailcatcher:read') return 'Mail catcher';
  const tag = ({ 'service-erp': 'ERP services', servers: 'Servers', operations: 'Operations', decisions: 'Decisions', token: 'Token', activity: 'Activity' } as Record<string, string>)[segment];
  // A tag the document's list lacks is an error to OpenAPI tools (Redocly, Spectral): a new path segment needs its tag here.
  if (!tag) throw new Error(`No OpenAPI tag for ${capability.http.path}: add one to tagOf() and to the document's tags.`);
  return tag;
}

/** Every event a webhook can receive, as OpenAPI 3.1 `webhooks`, with the signing headers. */
function webhooksOf(): JsonSchema {
  const header = (name: string, description: string) => ({ name, in: 'header', required: true, schema: { type: 'string' }, description });
  return Object.fromEntries(EVENT_CATALOG.map((event) => [event.type, {
    post: {
      operationId: `event_${event.type.replace('.', '_')}`,
      summary: event.type,
      description: `${event.description} Signed per Standard Webhooks: verify webhook-signature (v1, HMAC-SHA256 of ` +
        '"id.timestamp.body" with your whsec_ secret) and that webhook-timestamp is within five minutes.',
      parameters: [
        header('webhook-id', 'The event id; the same on every retry of the event.'),
        header('webhook-timestamp', 'Seconds since the epoch when this attempt was sent.'),
        header('webhook-signature', 'Space-separated v1,<base64> signatures (two during a secret rotation).'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchemaOf(envelopeSchema(event.type, event.data), 'output') } } },
      responses: {
        '200': { description: 'Any 2xx acknowledges the event. 410 disables the webhook; anything else is retried with backoff for about three days.' },
      },
    },
  }]));
}

function problemSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'RFC 9457 problem details with a stable `code`.',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string', examples: ['This API token does not have the services:operate scope.'] },
      code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
      permission: { type: 'string', description: 'The missing permission, for missing_permission.' },
      operation_id: { type: 'string', description: 'The operation in flight, for conflict.' },
      errors: {
        type: 'array',
        items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'] },
      },
    },
  };
}
