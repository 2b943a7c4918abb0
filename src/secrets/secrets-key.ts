// The key that seals secrets kept in the database (webhook signing secrets, the sign-in server's
// keys), so that a copy of the database, or a backup of it, is not enough to forge anything. It
// never lives in the database: TEAMINFRA_SECRETS_KEY when set (several nodes sharing PostgreSQL
// must all be given the same one), else the file secrets.key in the data directory, made on first
// use, owner-only. TEAMINFRA_SECRETS_KEY_PREVIOUS (comma-separated) are older keys, only opened
// with, while serve seals everything again with the current key (docs/secrets.md).
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SECRETS_KEY_FILE = 'secrets.key';
const KEY_BYTES = 32;

export interface SecretsKey {
  /** Names the key in sealed values and messages; derived from the key, reveals nothing of it. */
  id: string;
  bytes: Buffer;
  /** Where it came from, for messages: the variable's name or the file's path. */
  source: string;
}

export interface SecretsKeys {
  current: SecretsKey;
  previous: SecretsKey[];
}

/** A key that cannot be used, said in a sentence that never shows the key. */
export class SecretsKeyError extends Error {}

export function loadSecretsKeys(dataDir: string, env: NodeJS.ProcessEnv = process.env): SecretsKeys {
  const given = env.TEAMINFRA_SECRETS_KEY?.trim();
  const current = given ? keyFrom(given, 'TEAMINFRA_SECRETS_KEY') : keyFileOf(dataDir);
  const previous = (env.TEAMINFRA_SECRETS_KEY_PREVIOUS ?? '').split(',').map((text) => text.trim()).filter(Boolean)
    .map((text) => keyFrom(text, 'TEAMINFRA_SECRETS_KEY_PREVIOUS'))
    .filter((key) => key.id !== current.id);
  return { current, previous };
}

function keyFrom(text: string, source: string): SecretsKey {
  const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (bytes.length !== KEY_BYTES) {
    throw new SecretsKeyError(`${source} must be ${KEY_BYTES} random bytes in base64 (${text.length} characters given, ` +
      `${bytes.length} bytes decoded); make one with: openssl rand -base64 ${KEY_BYTES}`);
  }
  return { id: createHash('sha256').update('teaminfra secrets key id\0').update(bytes).digest('hex').slice(0, 16), bytes, source };
}

function keyFileOf(dataDir: string): SecretsKey {
  const path = resolve(join(dataDir, SECRETS_KEY_FILE));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    // 'wx': when two processes start on a fresh directory at once, one writes, both read that one.
    writeFileSync(path, randomBytes(KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return keyFrom(readFileSync(path, 'utf8').trim(), path);
}
