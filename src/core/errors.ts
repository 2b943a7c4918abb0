// One error type for every channel. `code` is stable, `detail` is the public sentence, and
// `cause` is for our logs only: no formatter ever sends it to a client.
export const ERROR_STATUS = {
  invalid_token: 401,
  channel_not_accepted: 403,
  plan_excludes_api: 403,
  missing_permission: 403,
  restricted_token_cannot_create: 403,
  token_management_not_available: 403,
  host_not_allowed: 403,
  own_decision: 403,
  not_decision_asker: 403,
  validation_failed: 400,
  not_found: 404,
  not_acceptable: 406,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<ErrorCode, string> = {
  invalid_token: 'Invalid token',
  channel_not_accepted: 'Token not accepted here',
  plan_excludes_api: 'Plan excludes the API',
  missing_permission: 'Missing permission',
  restricted_token_cannot_create: 'Restricted token cannot create',
  token_management_not_available: 'Tokens are managed in the panel',
  host_not_allowed: 'Host not allowed',
  own_decision: 'Cannot answer own decision',
  not_decision_asker: 'Not the asker',
  validation_failed: 'Invalid request',
  not_found: 'Not found',
  not_acceptable: 'Not acceptable',
  request_timeout: 'Request timeout',
  conflict: 'Conflict',
  payload_too_large: 'Request too large',
  uri_too_long: 'Address too long',
  unsupported_media_type: 'Unsupported media type',
  range_not_satisfiable: 'Range not satisfiable',
  rate_limited: 'Too many requests',
  headers_too_large: 'Headers too large',
  internal: 'Internal error',
};

export interface FieldError {
  field: string;
  message: string;
}

/** Extra public members of the problem document, by code. */
export interface ErrorExtras {
  permission?: string;
  errors?: FieldError[];
  retryAfterSeconds?: number;
  operationId?: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ErrorExtras = {},
    /** Internal reason, for logs and the audit trail; never sent to a client. */
    readonly internalReason?: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.status = ERROR_STATUS[code];
    this.title = TITLES[code];
  }
}

export const INTERNAL_ERROR_SENTENCE = 'Something went wrong on our side. The error has been logged; please try again.';

export function missingPermission(permission: string): AppError {
  return new AppError('missing_permission', `This API token does not have the ${permission} scope.`, { permission });
}

export function notFound(what = 'resource'): AppError {
  return new AppError('not_found', `No such ${what}, or this API token cannot reach it.`);
}

/** Turns anything thrown into an AppError, hiding whatever was not meant for clients. */
export function toAppError(thrown: unknown): AppError {
  if (thrown instanceof AppError) return thrown;
  return new AppError('internal', INTERNAL_ERROR_SENTENCE, {}, String(thrown), { cause: thrown });
}
