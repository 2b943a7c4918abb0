// Ids are a readable prefix plus a time-sortable body, so "order by id" is creation order and a
// cursor is simply the last id seen. 10 base36 chars of milliseconds, then 10 random.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
let lastMillis = 0;
let sequence = 0;

export type IdPrefix = 'team' | 'usr' | 'srv' | 'svc' | 'tok' | 'op' | 'opt' | 'bak' | 'eml' | 'wh' | 'evt' | 'dlv' | 'aud' | 'dec' | 'inc' | 'ntf' | 'drl' | 'mov';

/** A new id; `now` is the millisecond it carries, for a row whose time column must agree with it (audit.ts). */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  // Within one millisecond the sequence keeps ids of one process in creation order.
  if (now >= lastMillis) {
    sequence = now === lastMillis ? sequence + 1 : 0;
    lastMillis = now;
  }
  const time = now.toString(36).padStart(9, '0') + ALPHABET[sequence % 36];
  const bytes = randomBytes(10);
  let random = '';
  for (const byte of bytes) random += ALPHABET[byte % 36];
  return `${prefix}_${time}${random}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
