// Token values: `tinf_` + 43 base62 characters of 32 random bytes + 6 base62 characters of the
// CRC32 of that body. The prefix makes leaked tokens scannable; the checksum lets us refuse a
// mistyped or made-up value without a database lookup.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const TOKEN_PREFIX = 'tinf_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
export const TOKEN_LENGTH = TOKEN_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;

function toBase62(value: bigint, width: number): string {
  let text = '';
  let rest = value;
  while (rest > 0n) {
    text = BASE62[Number(rest % 62n)] + text;
    rest /= 62n;
  }
  return text.padStart(width, '0');
}

function checksumOf(body: string): string {
  return toBase62(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

export function generateTokenValue(): string {
  const body = toBase62(BigInt('0x' + randomBytes(32).toString('hex')), BODY_LENGTH);
  return TOKEN_PREFIX + body + checksumOf(body);
}

/** True when the value has our shape and its checksum matches; says nothing about whether it exists. */
export function isWellFormedToken(value: string): boolean {
  if (value.length !== TOKEN_LENGTH || !value.startsWith(TOKEN_PREFIX)) return false;
  const body = value.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + BODY_LENGTH);
  for (const char of body) if (!BASE62.includes(char)) return false;
  return checksumOf(body) === value.slice(TOKEN_PREFIX.length + BODY_LENGTH);
}

/** What is stored and looked up: SHA-256 of the value, hex. */
export function hashTokenValue(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The part the panel may show: prefix and a few characters, never enough to use. */
export function displayParts(value: string): { prefix: string; lastFour: string } {
  return { prefix: value.slice(0, TOKEN_PREFIX.length + 4), lastFour: value.slice(-4) };
}
