// Session ids bound to the token that opened the session, without keeping any session state.
// The id is a random nonce and a MAC of it keyed by the token's id (the api_tokens row), not by
// its value: an OAuth refresh gives the same token a new value, and the assistant's session must
// survive that; a revocation ends the token, and so every request of the session (401). Any node
// can check the pair (nothing shared, no memory). The token id is not a secret, and need not be:
// a session carries no authority (the bearer is checked on every request); the binding only keeps
// one token from continuing a session another token opened.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const NONCE_BYTES = 16;
const MAC_BYTES = 16;

export function openSessionId(tokenId: string): string {
  const nonce = randomBytes(NONCE_BYTES).toString('base64url');
  return `${nonce}.${macOf(nonce, tokenId).toString('base64url')}`;
}

/** True when the session id was opened by this same token (whatever value it had then). */
export function sessionBelongsTo(sessionId: string, tokenId: string): boolean {
  const [nonce, mac, extra] = sessionId.split('.');
  if (!nonce || !mac || extra !== undefined || nonce.length > 64) return false;
  const presented = Buffer.from(mac, 'base64url');
  const expected = macOf(nonce, tokenId);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

function macOf(nonce: string, tokenId: string): Buffer {
  return createHmac('sha256', `teaminfra mcp session:${tokenId}`).update(nonce).digest().subarray(0, MAC_BYTES);
}
