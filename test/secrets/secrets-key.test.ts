// Where the secrets key comes from: TEAMINFRA_SECRETS_KEY, else a key file made owner-only in
// the data directory on first use; a malformed key is refused with a sentence that shows no key.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSecretsKeys } from '../../src/secrets/secrets-key.js';
import { tempDataDir } from '../support/fixtures.js';

describe('loadSecretsKeys', () => {
  const dirs: string[] = [];
  const dir = () => {
    const made = tempDataDir();
    dirs.push(made);
    return made;
  };
  afterAll(() => { for (const made of dirs) rmSync(made, { recursive: true, force: true }); });

  it('makes an owner-only key file in the data directory on first use, and reads the same key afterwards', () => {
    const dataDir = dir();
    const first = loadSecretsKeys(dataDir, {});
    const file = join(dataDir, 'secrets.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(first.current.source).toBe(file);
    expect(loadSecretsKeys(dataDir, {}).current.id).toBe(first.current.id);
  });

  it('uses TEAMINFRA_SECRETS_KEY when set, and makes no key file', () => {
    const dataDir = dir();
    const key = randomBytes(32).toString('base64');
    const keys = loadSecretsKeys(dataDir, { TEAMINFRA_SECRETS_KEY: key });
    expect(keys.current.bytes.toString('base64')).toBe(key);
    expect(keys.current.source).toBe('TEAMINFRA_SECRETS_KEY');
    expect(existsSync(join(dataDir, 'secrets.key'))).toBe(false);
  });

  it('refuses a key that is not 32 bytes of base64, saying how to make one and never showing it', () => {
    expect(() => loadSecretsKeys(dir(), { TEAMINFRA_SECRETS_KEY: 'not-a-key-at-all' }))
      .toThrow('TEAMINFRA_SECRETS_KEY must be 32 random bytes in base64 (16 characters given, 12 bytes decoded); make one with: openssl rand -base64 32');
    const short = randomBytes(16).toString('base64');
    expect(() => loadSecretsKeys(dir(), { TEAMINFRA_SECRETS_KEY: randomBytes(32).toString('base64'), TEAMINFRA_SECRETS_KEY_PREVIOUS: short }))
      .toThrow(/^TEAMINFRA_SECRETS_KEY_PREVIOUS must be 32 random bytes in base64/);
    const refusal = (() => {
      try {
        loadSecretsKeys(dir(), { TEAMINFRA_SECRETS_KEY: short });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(refusal).toMatch(/^TEAMINFRA_SECRETS_KEY must be 32 random bytes/);
    expect(refusal).not.toContain(short);
  });
});
