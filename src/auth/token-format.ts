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

/** The CRC32 (below 2^32, so exact in a Number) in base62; without BigInt, since every request checks one. */
function checksumOf(body: string): string {
  let text = '';
  for (let rest = crc32(body); rest > 0; rest = Math.floor(rest / 62)) text = BASE62[rest % 62] + text;
  return text.padStart(CHECKSUM_LENGTH, '0');
}

const BASE62_BODY = new RegExp(`^[0-9A-Za-z]{${BODY_LENGTH}}$`);

export function generateTokenValue(): string {
  const body = toBase62(BigInt('0x' + randomBytes(32).toString('hex')), BODY_LENGTH);
  return TOKEN_PREFIX + body + checksumOf(body);
}

/** True when the value has our shape and its checksum matches; says nothing about whether it exists. */
export function isWellFormedToken(value: string): boolean {
  if (value.length !== TOKEN_LENGTH || !value.startsWith(TOKEN_PREFIX)) return false;
  const body = value.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + BODY_LENGTH);
  if (!BASE62_BODY.test(body)) return false;
  return checksumOf(body) === value.slice(TOKEN_PREFIX.length + BODY_LENGTH);
}

let lastHashed: { value: string; hash: string } | undefined;

/**
 * What is stored and looked up: SHA-256 of the value, hex. A request hashes its bearer twice in
 * one synchronous run (the rate limiter's key, then the token lookup), so the last digest is
 * remembered until that run ends, and never longer: the value is not kept past its request.
 */
export function hashTokenValue(value: string): string {
  if (lastHashed?.value === value) return lastHashed.hash;
  const hash = createHash('sha256').update(value).digest('hex');
  if (lastHashed === undefined) queueMicrotask(forgetLastHashed);
  lastHashed = { value, hash };
  return hash;
}

function forgetLastHashed(): void {
  lastHashed = undefined;
}

/** The part the panel may show: prefix and a few characters, never enough to use. */
export function displayParts(value: string): { prefix: string; lastFour: string } {
  return { prefix: value.slice(0, TOKEN_PREFIX.length + 4), lastFour: value.slice(-4) };
}
