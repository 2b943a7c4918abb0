// Standard Webhooks signing: secret `whsec_` + base64 key; header `webhook-signature` holds
// space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per valid secret.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function signatureFor(secret: string, id: string, timestamp: number, body: string): string {
  return 'v1,' + createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** The three headers of one delivery attempt; `secrets` has two entries during a rotation. */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signatureFor(secret, id, timestamp, body)).join(' '),
  };
}

export const TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends Error {}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * For receivers: checks the signature (constant-time) and that the timestamp is within five
 * minutes, then returns the parsed event. Throws WebhookVerificationError otherwise.
 */
export function verifyWebhook<T = { type: string; timestamp: string; data: unknown }>(
  secret: string, headers: HeaderBag, body: string | Buffer, nowSeconds = Math.floor(Date.now() / 1000),
): T {
  const id = header(headers, 'webhook-id');
  const timestamp = Number(header(headers, 'webhook-timestamp'));
  const signatures = header(headers, 'webhook-signature');
  if (!id || !Number.isInteger(timestamp) || !signatures) throw new WebhookVerificationError('Missing webhook headers.');
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) throw new WebhookVerificationError('Timestamp outside the tolerance.');
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const expected = Buffer.from(signatureFor(secret, id, timestamp, text));
  const matches = signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No matching signature.');
  return JSON.parse(text) as T;
}
