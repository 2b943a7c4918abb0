import { describe, expect, it } from 'vitest';
import { displayParts, generateTokenValue, hashTokenValue, isWellFormedToken, TOKEN_LENGTH } from '../../src/auth/token-format.js';

describe('token format', () => {
  it('generates tinf_ values of a fixed length that pass their own checksum', () => {
    const value = generateTokenValue();
    expect(value).toMatch(/^tinf_[0-9A-Za-z]+$/);
    expect(value).toHaveLength(TOKEN_LENGTH);
    expect(isWellFormedToken(value)).toBe(true);
  });

  it('generates a different value every time', () => {
    const values = new Set(Array.from({ length: 200 }, generateTokenValue));
    expect(values.size).toBe(200);
  });

  it('refuses a value with one character changed, by checksum alone', () => {
    const value = generateTokenValue();
    const index = 10;
    const changed = value.slice(0, index) + (value[index] === 'a' ? 'b' : 'a') + value.slice(index + 1);
    expect(isWellFormedToken(changed)).toBe(false);
  });

  it('refuses values of another shape', () => {
    expect(isWellFormedToken('')).toBe(false);
    expect(isWellFormedToken('ghp_' + 'a'.repeat(50))).toBe(false);
    expect(isWellFormedToken(generateTokenValue() + 'x')).toBe(false);
  });

  it('stores a SHA-256 hex digest, never the value', () => {
    const value = generateTokenValue();
    const hash = hashTokenValue(value);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(value.slice(5, 15));
  });

  it('shows only a prefix and the last four characters', () => {
    const value = generateTokenValue();
    const parts = displayParts(value);
    expect(parts.prefix).toBe(value.slice(0, 9));
    expect(parts.lastFour).toBe(value.slice(-4));
  });
});
