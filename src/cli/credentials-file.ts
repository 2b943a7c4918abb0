// Where `teaminfra login` keeps its token: $XDG_CONFIG_HOME/teaminfra/credentials.json (else
// ~/.config/teaminfra/credentials.json), readable by its owner only. It is written to a temporary
// file created with mode 0600 and renamed into place, so the token is never readable by others,
// not even for a moment, and a crash never leaves half a file.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface Credentials {
  /** The server's public base URL, as given to `teaminfra login --url`. */
  url: string;
  token: string;
  token_id: string;
  team: { id: string; name: string };
  signed_in_at: string;
}

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const configHome = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(configHome, 'teaminfra', 'credentials.json');
}

export function readCredentials(path = credentialsPath()): Credentials | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<Credentials>;
  if (typeof parsed.url !== 'string' || typeof parsed.token !== 'string') {
    throw new Error(`${path} is not a teaminfra credentials file; delete it and run "teaminfra login" again.`);
  }
  return parsed as Credentials;
}

export function writeCredentials(credentials: Credentials, path = credentialsPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(temporary, path);
}

export function deleteCredentials(path = credentialsPath()): void {
  rmSync(path, { force: true });
}
