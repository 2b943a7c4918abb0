// Seals and opens the secrets kept in the database with AES-256-GCM. A sealed value names the
// key that sealed it, so older keys can still open it during a key change, and is bound to where
// it belongs (`context`, e.g. the webhook's id): moved to another row, it no longer opens.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretsKey, SecretsKeys } from './secrets-key.js';

const PREFIX = 'tsec1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that cannot be opened: another key, or altered. */
export class UnsealError extends Error {}

export class SecretBox {
  constructor(private readonly keys: SecretsKeys) {}

  /** The current key's id and where it came from, for messages. */
  get currentKey(): { id: string; source: string } {
    return { id: this.keys.current.id, source: this.keys.current.source };
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.current.bytes, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [PREFIX, this.keys.current.id, iv.toString('base64url'), body.toString('base64url')].join(':');
  }

  /**
   * The plaintext of a sealed value. A value that is not sealed is returned as it is: one kept in
   * clear by an earlier version, which `serve` seals at its next start (seal-stored-secrets.ts).
   */
  reveal(value: string, context: string): string {
    if (!isSealed(value)) return value;
    const [, keyId, iv, body] = value.split(':') as [string, string, string, string];
    const key = this.keyWithId(keyId);
    if (!key) throw new UnsealError(`A secret is sealed with a key this process does not have (key id ${keyId}).`);
    const bytes = Buffer.from(body, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnsealError(`A secret sealed with key id ${keyId} does not open: it was altered, or moved from where it belongs.`);
    }
  }

  /** True when the value is sealed with the current key. */
  isCurrent(value: string): boolean {
    return keyIdOf(value) === this.keys.current.id;
  }

  /** The value sealed with the current key, or undefined when it already is (clear or sealed with a previous key: sealed anew). */
  resealed(value: string, context: string): string | undefined {
    return this.isCurrent(value) ? undefined : this.seal(this.reveal(value, context), context);
  }

  private keyWithId(id: string): SecretsKey | undefined {
    return [this.keys.current, ...this.keys.previous].find((key) => key.id === id);
  }
}

export function isSealed(value: string): boolean {
  return value.startsWith(`${PREFIX}:`) && value.split(':').length === 4;
}

/** The key id a sealed value names. */
export function keyIdOf(sealed: string): string | undefined {
  return isSealed(sealed) ? sealed.split(':')[1] : undefined;
}
