// Session ids bound to the token that opened the session (its id, not its value), checked
// without server state.
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { openSessionId, sessionBelongsTo } from '../../src/mcp/session-binding.js';

describe('session binding', () => {
  const owner = newId('tok');
  const other = newId('tok');

  it('recognises a session id when the same token presents it', () => {
    expect(sessionBelongsTo(openSessionId(owner), owner)).toBe(true);
  });

  it('refuses a session id when another token presents it', () => {
    expect(sessionBelongsTo(openSessionId(owner), other)).toBe(false);
  });

  it('opens a different id each time when the same token initializes again', () => {
    expect(openSessionId(owner)).not.toBe(openSessionId(owner));
  });

  it('refuses an id when it is tampered, truncated or made up', () => {
    const [nonce, mac] = openSessionId(owner).split('.') as [string, string];
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    for (const forged of [`${nonce}.${flipped}`, `${nonce}.${mac.slice(0, 10)}`, `x${nonce}.${mac}`, nonce, `${nonce}.${mac}.x`, '', 'a'.repeat(500) + '.b']) {
      expect(sessionBelongsTo(forged, owner), forged).toBe(false);
    }
  });
});
