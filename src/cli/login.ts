// `teaminfra login --url BASE` and `teaminfra logout`: the command line signs in with the OAuth
// device authorization grant (RFC 8628). It shows an address and a code; an owner or admin opens
// the address, enters the code and approves in the panel; the command line then receives a team
// token (full access, accepted by the REST API and command line) and keeps it in the user's
// config directory. `logout` revokes that token at the OAuth server (RFC 7009) and deletes it.
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, callApi, send } from './api-client.js';
import { credentialsPath, deleteCredentials, readCredentials, writeCredentials } from './credentials-file.js';
import { parseOptions, required } from './options.js';
import { ProgressLine } from './progress-line.js';

/** The built-in client of the command line (src/oauth/provider-config.ts). */
const CLIENT_ID = 'teaminfra-cli';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

interface ServerMetadata {
  device_authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string;
}

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

export async function runLogin(args: string[]): Promise<void> {
  const values = parseOptions(args, { url: { type: 'string' } }, 'login');
  const base = required(values, 'url', 'login').replace(/\/+$/, '');
  const path = credentialsPath();
  // Read first: a broken file is reported before anyone approves anything.
  const previous = readCredentials(path);
  const metadata = await serverMetadata(base);
  const started = await send(metadata.device_authorization_endpoint, { form: { client_id: CLIENT_ID, scope: 'api' } });
  if (started.status !== 200) throw new ApiError(oauthSentence(started.body, 'The server refused to start a sign-in.'), started.status);
  const device = started.body as DeviceAuthorization;

  process.stderr.write([
    'To sign in, open this address in a browser where you can sign in to the teaminfra panel as an owner or admin:',
    `  ${device.verification_uri}`,
    `and enter the code: ${device.user_code}`,
    ...(device.verification_uri_complete ? [`(or open ${device.verification_uri_complete})`] : []),
    '',
  ].join('\n') + '\n');

  const token = await waitForApproval(metadata, device);
  // The token tells who we are now; this also proves it works before it is saved.
  const self = (await callApi(base, token, 'GET', '/api/token')).body as { id: string; team: { id: string; name: string } };
  writeCredentials({ url: base, token, token_id: self.id, team: { id: self.team.id, name: self.team.name }, signed_in_at: new Date().toISOString() }, path);
  // The token this login replaces would otherwise keep working with nothing left to use it.
  if (previous && previous.token !== token) {
    const revoked = await revoke(previous.url, previous.token).then(() => true, () => false);
    process.stderr.write(revoked
      ? `The token of the previous sign-in (${previous.url}) is revoked.\n`
      : `The token of the previous sign-in (${previous.url}) could not be revoked; revoke it on the API Tokens page of that panel.\n`);
  }
  if (values.json) process.stdout.write(JSON.stringify({ url: base, team: self.team, token_id: self.id, credentials_file: path }) + '\n');
  else process.stdout.write(`Signed in to ${self.team.name} at ${base}. The token is saved in ${path} (readable by you only).\n`);
}

async function waitForApproval(metadata: ServerMetadata, device: DeviceAuthorization): Promise<string> {
  const progress = new ProgressLine();
  const deadline = Date.now() + device.expires_in * 1000;
  let intervalSeconds = device.interval ?? 5;
  try {
    for (;;) {
      const remaining = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      progress.update('waiting', `Waiting for approval in the panel... (the code expires in ${Math.floor(remaining / 60)}m${String(remaining % 60).padStart(2, '0')}s)`);
      await sleep(intervalSeconds * 1000);
      const answer = await send(metadata.token_endpoint, { form: { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: CLIENT_ID } });
      if (answer.status === 200 && typeof answer.body?.access_token === 'string') {
        progress.update('approved', 'Approved.');
        return answer.body.access_token as string;
      }
      switch (answer.body?.error) {
        case 'authorization_pending':
          continue;
        case 'slow_down':
          intervalSeconds += 5;
          continue;
        case 'access_denied':
          throw new ApiError('The sign-in was declined in the panel.', answer.status, 'access_denied');
        case 'expired_token':
          throw new ApiError('The code expired before anyone approved it. Run "teaminfra login" again.', answer.status, 'expired_token');
        default:
          throw new ApiError(oauthSentence(answer.body, `The sign-in failed (${answer.status}).`), answer.status);
      }
    }
  } finally {
    progress.end();
  }
}

export async function runLogout(args: string[]): Promise<void> {
  parseOptions(args, {}, 'logout');
  const path = credentialsPath();
  const credentials = readCredentials(path);
  if (!credentials) {
    process.stdout.write('Not signed in: there is nothing to sign out of.\n');
    return;
  }
  // The file is deleted only once the server confirmed: otherwise the token would still work
  // while nothing on this machine remembers it.
  try {
    await revoke(credentials.url, credentials.token);
  } catch (error) {
    throw new ApiError(`${(error as Error).message} ${path} is kept; revoke the token on the API Tokens page of the panel, then delete that file.`, 0);
  }
  deleteCredentials(path);
  process.stdout.write(`Signed out of ${credentials.team?.name ?? credentials.url}: the token is revoked and ${path} is deleted.\n`);
}

/** Revokes a token at the OAuth server that issued it (RFC 7009). */
async function revoke(base: string, token: string): Promise<void> {
  const metadata = await serverMetadata(base);
  const answer = await send(metadata.revocation_endpoint, { form: { token, token_type_hint: 'access_token', client_id: CLIENT_ID } });
  if (answer.status !== 200) throw new ApiError(oauthSentence(answer.body, `The server refused to revoke the token (${answer.status}).`), answer.status);
}

async function serverMetadata(base: string): Promise<ServerMetadata> {
  const answer = await send(`${base}/.well-known/oauth-authorization-server`);
  const body = answer.body as Partial<ServerMetadata> | undefined;
  if (answer.status !== 200 || !body?.device_authorization_endpoint || !body.token_endpoint || !body.revocation_endpoint) {
    throw new ApiError(`${base} does not look like a teaminfra server (no sign-in metadata at /.well-known/oauth-authorization-server).`, answer.status);
  }
  return body as ServerMetadata;
}

function oauthSentence(body: unknown, fallback: string): string {
  const error = body as { error?: string; error_description?: string } | undefined;
  return error?.error_description ?? error?.error ?? fallback;
}
