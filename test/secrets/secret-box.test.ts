// Sealing with AES-256-GCM: a sealed value opens only with its key and in its place.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, UnsealError } from '../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../src/secrets/secrets-key.js';

const keyText = () => randomBytes(32).toString('base64');
const boxOf = (current: string, previous = '') =>
  new SecretBox(loadSecretsKeys('/nonexistent', { TEAMINFRA_SECRETS_KEY: current, TEAMINFRA_SECRETS_KEY_PREVIOUS: previous }));

describe('SecretBox', () => {
  it('reveals what it sealed, and the sealed text shows nothing of it', () => {
    const box = boxOf(keyText());
    const sealed = box.seal('whsec_c2VjcmV0', 'webhook:wh_1');
    expect(sealed).not.toContain('whsec_');
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.seal('whsec_c2VjcmV0', 'webhook:wh_1')).not.toBe(sealed);
    expect(box.reveal(sealed, 'webhook:wh_1')).toBe('whsec_c2VjcmV0');
  });

  it('refuses to reveal a value moved to another place or altered', () => {
    const box = boxOf(keyText());
    const sealed = box.seal('whsec_c2VjcmV0', 'webhook:wh_1');
    expect(() => box.reveal(sealed, 'webhook:wh_2')).toThrow(UnsealError);
    const altered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.reveal(altered, 'webhook:wh_1')).toThrow(UnsealError);
  });

  it('reveals with a previous key and seals anew with the current one when the key changes', () => {
    const [oldKey, newKey] = [keyText(), keyText()];
    const sealed = boxOf(oldKey).seal('whsec_x', 'c');
    const box = boxOf(newKey, oldKey);
    expect(box.isCurrent(sealed)).toBe(false);
    const resealed = box.resealed(sealed, 'c') as string;
    expect(box.isCurrent(resealed)).toBe(true);
    expect(boxOf(newKey).reveal(resealed, 'c')).toBe('whsec_x');
    expect(box.resealed(resealed, 'c')).toBeUndefined();
    expect(() => boxOf(newKey).reveal(sealed, 'c')).toThrow(/sealed with a key this process does not have/);
  });

  it('returns a value kept in clear by an earlier version as it is, and seals it on request', () => {
    const box = boxOf(keyText());
    expect(box.reveal('whsec_clear', 'c')).toBe('whsec_clear');
    expect(box.reveal(box.resealed('whsec_clear', 'c') as string, 'c')).toBe('whsec_clear');
  });
});
