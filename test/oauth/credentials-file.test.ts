// Where `teaminfra login` keeps its token, and that nobody else can read it.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialsPath, deleteCredentials, readCredentials, writeCredentials } from '../../src/cli/credentials-file.js';

const CREDENTIALS = { url: 'http://127.0.0.1:8080', token: 'secret-value', token_id: 'tok_1', team: { id: 'team_1', name: 'Acme' }, signed_in_at: '2026-01-01T00:00:00.000Z' };

describe('credentials file', () => {
  let home: string;
  beforeEach(() => { home = mkdtempSync(join(tmpdir(), 'teaminfra-credentials-')); });
  afterEach(() => { rmSync(home, { recursive: true, force: true }); });

  it('lives under $XDG_CONFIG_HOME/teaminfra, else ~/.config/teaminfra', () => {
    expect(credentialsPath({ XDG_CONFIG_HOME: home })).toBe(join(home, 'teaminfra', 'credentials.json'));
    expect(credentialsPath({})).toBe(join(homedir(), '.config', 'teaminfra', 'credentials.json'));
    // The XDG specification ignores a relative path.
    expect(credentialsPath({ XDG_CONFIG_HOME: 'relative' })).toBe(join(homedir(), '.config', 'teaminfra', 'credentials.json'));
  });

  it('is written with mode 0600 in a 0700 directory, and read back', () => {
    const path = credentialsPath({ XDG_CONFIG_HOME: home });
    writeCredentials(CREDENTIALS, path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'teaminfra')).mode & 0o777).toBe(0o700);
    expect(readCredentials(path)).toEqual(CREDENTIALS);
    writeCredentials({ ...CREDENTIALS, token: 'another' }, path);
    expect(JSON.parse(readFileSync(path, 'utf8')).token).toBe('another');
    deleteCredentials(path);
    expect(readCredentials(path)).toBeUndefined();
  });
});
