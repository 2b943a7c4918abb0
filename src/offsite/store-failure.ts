// What went wrong with a team's object store, as a sentence for the team (a destination's check,
// an upload's reason, a restore's): the store's own error code and status, never its message
// text nor anything of the request (keys, signatures). `transient`: the same call may work later
// (the store or the network was down); else the store refused it (credentials, bucket,
// permission), and only a change of the destination will help.
export class StoreFailure extends Error {
  constructor(readonly sentence: string, readonly transient: boolean, options?: { cause?: unknown }) {
    super(sentence, options);
  }
}

interface SdkError { name?: string; Code?: string; code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown }

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/** The StoreFailure for an error the S3 client (or the network under it) threw while `doing` (e.g. "Writing a test object"). */
export function storeFailureOf(error: unknown, doing: string, where: { endpoint: string; bucket: string }): StoreFailure {
  if (error instanceof StoreFailure) return error;
  const sdk = (error ?? {}) as SdkError;
  const status = sdk.$metadata?.httpStatusCode;
  const code = sdk.Code ?? (sdk.name && sdk.name !== 'Unknown' && sdk.name !== 'Error' ? sdk.name : undefined);
  const network = networkCodeOf(error);
  const sentence = (text: string, transient: boolean) => new StoreFailure(`${doing} failed: ${text}`, transient, { cause: error });
  if (network === 'EPRIVATE') return sentence("the endpoint's host resolves to a private address, which is not allowed for this destination.", false);
  if (network) return sentence(`the store at ${where.endpoint} could not be reached (${network}).`, true);
  if (sdk.name === 'TimeoutError' || sdk.name === 'RequestTimeout') return sentence(`the store at ${where.endpoint} did not answer in time.`, true);
  if (code === 'NoSuchBucket' || (status === 404 && code === undefined && doing.startsWith('Checking'))) {
    return sentence(`the bucket "${where.bucket}" does not exist at ${where.endpoint}.`, false);
  }
  if (code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch') {
    return sentence(`the store refused the access key id or the secret access key (${code}).`, false);
  }
  if (code === 'AccessDenied' || status === 403) {
    return sentence(`the store denied access (${code ?? 'HTTP 403'}): check the access key id, the secret access key and what the key may do in bucket "${where.bucket}".`, false);
  }
  if (status !== undefined && status >= 500) return sentence(`the store answered with an error (HTTP ${status}${code ? `, ${code}` : ''}).`, true);
  if (status !== undefined) return sentence(`the store refused the request (HTTP ${status}${code ? `, ${code}` : ''}).`, false);
  if (sdk.name === 'AbortError') return sentence('it was interrupted.', true);
  return sentence('an internal error occurred; it has been logged.', true);
}

/** The system error code (ECONNREFUSED...) somewhere in an error's causes, if any. */
function networkCodeOf(error: unknown): string | undefined {
  for (let current = error as SdkError | undefined, depth = 0; current && depth < 5; current = current.cause as SdkError | undefined, depth++) {
    if (typeof current.code === 'string' && (NETWORK_CODES.has(current.code) || current.code === 'EPRIVATE')) return current.code;
    const errors = (current as { errors?: unknown[] }).errors;
    if (Array.isArray(errors)) for (const each of errors) {
      const found = networkCodeOf(each);
      if (found) return found;
    }
  }
  const message = (error as Error | undefined)?.message ?? '';
  if (/socket hang up|other side closed|premature close/i.test(message)) return 'ECONNRESET';
  return undefined;
}
