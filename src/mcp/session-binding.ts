// Session ids bound to the token that opened the session, without keeping any session state.
// The id is a random nonce and a MAC of it keyed by the SHA-256 of the token value: only a
// holder of that token can present a matching pair, any node can check it (nothing shared, no
// memory), and it survives access changes because the token's value never changes.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hashTokenValue } from '../auth/token-format.js';

const NONCE_BYTES = 16;
const MAC_BYTES = 16;

export function openSessionId(bearer: string): string {
  const nonce = randomBytes(NONCE_BYTES).toString('base64url');
  return `${nonce}.${macOf(nonce, bearer).toString('base64url')}`;
}

/** True when the session id was opened by this same token. */
export function sessionBelongsTo(sessionId: string, bearer: string): boolean {
  const [nonce, mac, extra] = sessionId.split('.');
  if (!nonce || !mac || extra !== undefined || nonce.length > 64) return false;
  const presented = Buffer.from(mac, 'base64url');
  const expected = macOf(nonce, bearer);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

function macOf(nonce: string, bearer: string): Buffer {
  return createHmac('sha256', hashTokenValue(bearer)).update(nonce).digest().subarray(0, MAC_BYTES);
}
