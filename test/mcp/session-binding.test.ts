// Session ids bound to the token that opened the session, checked without server state.
import { describe, expect, it } from 'vitest';
import { generateTokenValue } from '../../src/auth/token-format.js';
import { openSessionId, sessionBelongsTo } from '../../src/mcp/session-binding.js';

describe('session binding', () => {
  const owner = generateTokenValue();
  const other = generateTokenValue();

  it('recognises a session id opened by the same token', () => {
    expect(sessionBelongsTo(openSessionId(owner), owner)).toBe(true);
  });

  it('refuses a session id opened by another token', () => {
    expect(sessionBelongsTo(openSessionId(owner), other)).toBe(false);
  });

  it('opens a different id each time', () => {
    expect(openSessionId(owner)).not.toBe(openSessionId(owner));
  });

  it('refuses a tampered, truncated or made-up id', () => {
    const [nonce, mac] = openSessionId(owner).split('.') as [string, string];
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    for (const forged of [`${nonce}.${flipped}`, `${nonce}.${mac.slice(0, 10)}`, `x${nonce}.${mac}`, nonce, `${nonce}.${mac}.x`, '', 'a'.repeat(500) + '.b']) {
      expect(sessionBelongsTo(forged, owner), forged).toBe(false);
    }
  });
});
