import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
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

  it('writes the CRC32 of the body in base62 as its last six characters', () => {
    for (let i = 0; i < 2000; i++) {
      const value = generateTokenValue();
      expect(value.slice(-6)).toBe(base62(crc32(value.slice(5, -6)), 6));
      expect(isWellFormedToken(value)).toBe(true);
    }
  });

  it('refuses a body with a character outside base62', () => {
    const value = generateTokenValue();
    expect(isWellFormedToken(value.slice(0, 8) + '-' + value.slice(9))).toBe(false);
    expect(isWellFormedToken(value.slice(0, 8) + 'é' + value.slice(9))).toBe(false);
  });

  it('hashes the same value to the same digest within a run and after it, and another value to another', async () => {
    const [one, two] = [generateTokenValue(), generateTokenValue()];
    const first = hashTokenValue(one);
    expect(hashTokenValue(one)).toBe(first);
    expect(hashTokenValue(two)).not.toBe(first);
    expect(hashTokenValue(one)).toBe(first);
    await Promise.resolve();
    expect(hashTokenValue(one)).toBe(first);
    expect(first).toBe(createHash('sha256').update(one).digest('hex'));
  });

  it('shows only a prefix and the last four characters', () => {
    const value = generateTokenValue();
    const parts = displayParts(value);
    expect(parts.prefix).toBe(value.slice(0, 9));
    expect(parts.lastFour).toBe(value.slice(-4));
  });
});

/** The checksum as the first tokens were made: BigInt arithmetic, left-padded with zeros. */
function base62(value: number, width: number): string {
  const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let text = '';
  for (let rest = BigInt(value); rest > 0n; rest /= 62n) text = digits[Number(rest % 62n)] + text;
  return text.padStart(width, '0');
}
