// Secrets at rest, through `teaminfra serve` as a real process on a real SQLite file: webhook
// secrets, the sign-in server's keys, Docker copies' mail passwords and registry passwords are sealed in the database with a key that is not in it,
// the clear values an earlier version left are sealed at start with no copy left in the file,
// keys change with TEAMINFRA_SECRETS_KEY_PREVIOUS, and a process with another key refuses to start.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { readDockerState } from '../../src/engine/docker/docker-state.js';
import { findRegistryCredentials } from '../../src/engine/docker/registry-credentials.js';
import { nowIso } from '../../src/db/ids.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../src/secrets/secrets-key.js';
import { generateWebhookSecret, verifyWebhook } from '../../src/webhooks/signing.js';
import { killProcessesMatching } from '../engine/support/engine-http.js';
import { runCli, seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/** The database as it is on disk: the file and its write-ahead log. */
function databaseBytes(dataDir: string): Buffer {
  const files = ['teaminfra.sqlite', 'teaminfra.sqlite-wal'].map((name) => join(dataDir, name)).filter((path) => existsSync(path));
  return Buffer.concat(files.map((path) => readFileSync(path)));
}

/** The texts (and, for a webhook secret, its key bytes' base64) found in the database file. */
function foundOnDisk(dataDir: string, texts: string[]): string[] {
  const bytes = databaseBytes(dataDir);
  return texts.flatMap((text) => [text, text.replace(/^whsec_/, '')]).filter((text) => bytes.includes(Buffer.from(text)));
}

async function adminWith(dataDir: string, env: NodeJS.ProcessEnv, args: string[]) {
  const result = await runCli(['admin', ...args, '--data-dir', dataDir], { env });
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, string>;
}

/** A team with a service and a full-access token, and a webhook to `url` for service.started. */
async function seed(dataDir: string, url: string, env: NodeJS.ProcessEnv = {}) {
  const { teamId: team, serverId: server, serviceId: service, token } = await seedThroughCli(dataDir, { team: 'Hooks', service: 'Shop' }, env);
  const hook = await adminWith(dataDir, env, ['create-webhook', '--team', team, '--url', url, '--events', 'service.started,service.stopped', '--allow-private']);
  return { team, service, token, hook: hook as { id: string; secret: string } };
}

async function post(serve: ServeProcess, token: string, path: string) {
  const response = await fetch(serve.baseUrl + path, { method: 'POST', headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
  expect(response.status).toBe(202);
}

describe('secrets at rest', () => {
  const dataDirs: string[] = [];
  let serve: ServeProcess | undefined;
  let receiver: Receiver | undefined;
  const freshDataDir = () => {
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    return dataDir;
  };
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
    await receiver?.close();
    receiver = undefined;
  });
  afterAll(async () => {
    for (const dataDir of dataDirs) {
      await killProcessesMatching(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('keeps webhook secrets and the sign-in keys out of the database file, and deliveries still verify', async () => {
    const dataDir = freshDataDir();
    receiver = await startReceiver();
    const { token, service, hook } = await seed(dataDir, receiver.url);
    serve = await startServe(dataDir);
    // The sign-in server makes its keys on first use.
    expect((await fetch(`${serve.baseUrl}/.well-known/oauth-authorization-server`)).status).toBe(200);
    await post(serve, token, `/api/service-erp/${service}/start`);
    const [delivery] = await receiver.waitFor(1, 20_000);
    expect(verifyWebhook(hook.secret, delivery!.headers as Record<string, string>, delivery!.body)).toMatchObject({ type: 'service.started' });

    const db = openDatabase(dataDir);
    const stored = await db.kysely.selectFrom('oauth_records').select('payload').where('kind', '=', 'ServerSecrets').executeTakeFirstOrThrow();
    await db.close();
    expect(Object.keys(JSON.parse(stored.payload))).toEqual(['sealed']);
    const box = new SecretBox(loadSecretsKeys(dataDir, {}));
    const serverSecrets = JSON.parse(box.reveal(JSON.parse(stored.payload).sealed, 'oauth:ServerSecrets'));
    const signingKey = serverSecrets.jwks.keys[0].d as string;
    expect(signingKey.length).toBeGreaterThan(20);
    expect(foundOnDisk(dataDir, [hook.secret, serverSecrets.cookieKeys[0], signingKey])).toEqual([]);
    expect(statSync(join(dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);
  }, 60_000);

  it('seals the clear secrets an earlier version left (a Docker copy\'s mail password too) at first start, leaving no copy in the file', async () => {
    const dataDir = freshDataDir();
    receiver = await startReceiver();
    const { team, token, service } = await seed(dataDir, 'https://hooks.example.com/unused');
    // As an earlier version kept them: a webhook's secrets in clear (mid-rotation, so two), one
    // deleted (its row's bytes stay in a free page), and the sign-in server's keys.
    const [secret, previousSecret, deletedSecret] = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];
    const cookieKey = randomBytes(32).toString('base64url');
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    const signingKey = jwk.d as string;
    const db = openDatabase(dataDir);
    const now = new Date().toISOString();
    const webhook = (id: string, secretValue: string, previous: string | null) => ({
      id, team_id: team, url: receiver!.url, description: '', event_types: 'service.started', secret: secretValue,
      previous_secret: previous, previous_secret_expires_at: previous ? new Date(Date.now() + 3600_000).toISOString() : null,
      allow_private: 1, enabled: 1, disabled_reason: null, failing_since: null, created_at: now,
    });
    await db.kysely.deleteFrom('webhooks').execute();
    await db.kysely.insertInto('webhooks').values([webhook('wh_old', secret, previousSecret), webhook('wh_gone', deletedSecret, null)]).execute();
    await db.kysely.deleteFrom('webhooks').where('id', '=', 'wh_gone').execute();
    await db.kysely.deleteFrom('oauth_records').execute();
    await db.kysely.insertInto('oauth_records').values({
      kind: 'ServerSecrets', id: 'default', grant_id: null, user_code: null, uid: null, token_id: null, expires_at: null, consumed_at: null,
      payload: JSON.stringify({ cookieKeys: [cookieKey], jwks: { keys: [{ ...jwk, use: 'sig', alg: 'ES256', kid: 'old' }] } }),
    }).execute();
    // A Docker copy's login to the mail catcher, as an earlier version kept it.
    const mailPassword = randomBytes(24).toString('base64url');
    await db.kysely.insertInto('docker_services').values({
      service_id: service, volume: `teaminfra-data-${service}`, mail_username: service, mail_password: mailPassword, updated_at: now,
    }).execute();
    await db.kysely.deleteFrom('secrets_key_check').execute();
    db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    await db.close();
    expect(foundOnDisk(dataDir, [secret, previousSecret, deletedSecret, cookieKey, signingKey, mailPassword]).length).toBeGreaterThanOrEqual(6);

    serve = await startServe(dataDir);
    expect(foundOnDisk(dataDir, [secret, previousSecret, deletedSecret, cookieKey, signingKey, mailPassword])).toEqual([]);
    const sealedState = openDatabase(dataDir);
    const box = new SecretBox(loadSecretsKeys(dataDir, {}));
    expect(await readDockerState(sealedState.kysely, box, service)).toEqual({
      volume: `teaminfra-data-${service}`, mail: { username: service, password: mailPassword },
    });
    await sealedState.close();
    await post(serve, token, `/api/service-erp/${service}/start`);
    const [delivery] = await receiver.waitFor(1, 20_000);
    for (const signedWith of [secret, previousSecret]) {
      expect(verifyWebhook(signedWith, delivery!.headers as Record<string, string>, delivery!.body)).toMatchObject({ type: 'service.started' });
    }
    expect((await fetch(`${serve.baseUrl}/.well-known/oauth-authorization-server`)).status).toBe(200);
    await serve.stop();
    serve = undefined;
    expect(foundOnDisk(dataDir, [secret, previousSecret, deletedSecret, cookieKey, signingKey])).toEqual([]);
  }, 60_000);

  it('changes keys with TEAMINFRA_SECRETS_KEY_PREVIOUS, and refuses to start with a key the secrets are not sealed with', async () => {
    const dataDir = freshDataDir();
    receiver = await startReceiver();
    const [first, second, stranger] = [0, 1, 2].map(() => randomBytes(32).toString('base64'));
    const { team, token, service, hook } = await seed(dataDir, receiver.url, { TEAMINFRA_SECRETS_KEY: first });
    expect(existsSync(join(dataDir, 'secrets.key'))).toBe(false);
    // A Docker server's login to an image registry, sealed with the first key too.
    const dockerServer = (await adminWith(dataDir, { TEAMINFRA_SECRETS_KEY: first }, ['create-server', '--team', team, '--name', 'engine'])).id!;
    const seededDb = openDatabase(dataDir);
    await seededDb.kysely.insertInto('docker_servers').values({ server_id: dockerServer, docker_host: 'unix:///nonexistent.sock', image: null, created_at: nowIso() }).execute();
    await seededDb.close();
    writeFileSync(join(dataDir, 'registry-password'), 'registry secret');
    await adminWith(dataDir, { TEAMINFRA_SECRETS_KEY: first },
      ['set-registry-credentials', '--server', dockerServer, '--registry', 'registry.example.com', '--username', 'ci', '--password-file', join(dataDir, 'registry-password')]);

    const refused = await startServe(dataDir, [], { TEAMINFRA_SECRETS_KEY: stranger }).then(
      async (started) => { await started.stop(); return 'started'; }, (error: Error) => error.message);
    expect(refused).toContain('serve exited with 1');
    expect(refused).toMatch(/The secrets in this database are sealed with another key \(key id [0-9a-f]{16}\) than this process's \(key id [0-9a-f]{16}, from TEAMINFRA_SECRETS_KEY\)/);
    expect(refused).toContain('to change keys, give the old one in TEAMINFRA_SECRETS_KEY_PREVIOUS');
    expect(refused).not.toContain(stranger);
    const adminRefused = await runCli(['admin', 'create-webhook', '--team', team, '--url', receiver.url, '--allow-private', '--data-dir', dataDir],
      { env: { TEAMINFRA_SECRETS_KEY: stranger } });
    expect(adminRefused.code).toBe(1);
    expect(adminRefused.stderr).toContain('The secrets in this database are sealed with another key');

    serve = await startServe(dataDir, [], { TEAMINFRA_SECRETS_KEY: second, TEAMINFRA_SECRETS_KEY_PREVIOUS: first });
    await serve.stop();
    const resealed = openDatabase(dataDir);
    try {
      const secondOnly = new SecretBox(loadSecretsKeys(dataDir, { TEAMINFRA_SECRETS_KEY: second }));
      expect(await findRegistryCredentials(resealed.kysely, secondOnly, dockerServer, 'registry.example.com')).toEqual({ username: 'ci', password: 'registry secret' });
    } finally {
      await resealed.close();
    }
    // Everything is sealed with the new key now: the old one is no longer needed, nor accepted.
    serve = await startServe(dataDir, [], { TEAMINFRA_SECRETS_KEY: second });
    await post(serve, token, `/api/service-erp/${service}/start`);
    const [delivery] = await receiver.waitFor(1, 20_000);
    expect(verifyWebhook(hook.secret, delivery!.headers as Record<string, string>, delivery!.body)).toMatchObject({ type: 'service.started' });
    await serve.stop();
    serve = undefined;
    await expect(startServe(dataDir, [], { TEAMINFRA_SECRETS_KEY: first })).rejects.toThrow(/sealed with another key/);
  }, 90_000);
});
