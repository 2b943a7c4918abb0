// A server proxy's secrets kept with the server: the ACME account key made once and sealed, an
// operator's certificate checked against its key and read for its names, and both sealed anew
// under a new secrets key.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../src/db/connect.js';
import { nowIso } from '../../../src/db/ids.js';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertTeam } from '../../../src/db/repositories/teams.js';
import { acmeAccountKey, readServerCertificate, resealProxySecrets, serverCertificate, setServerCertificate } from '../../../src/engine/domains/proxy-secrets.js';
import { isSealed, SecretBox } from '../../../src/secrets/secret-box.js';
import { loadSecretsKeys, SECRETS_KEY_FILE } from '../../../src/secrets/secrets-key.js';
import { tempDataDir } from '../../support/fixtures.js';
import { makeTestCertificates } from '../../support/test-ca.js';

describe('proxy secrets', () => {
  let dataDir: string;
  let db: SqliteDb;
  let secrets: SecretBox;
  let serverId: string;
  const certificates = makeTestCertificates(['DNS:*.apps.example.com']);

  beforeAll(async () => {
    dataDir = tempDataDir();
    db = openDatabase(dataDir);
    secrets = new SecretBox(loadSecretsKeys(dataDir));
    const teamId = await insertTeam(db.kysely, { name: 'Secrets team', plan: 'starter', timezone: 'UTC' });
    serverId = await insertServer(db.kysely, { teamId, name: 'docker' });
    await db.kysely.insertInto('docker_servers').values({ server_id: serverId, docker_host: 'unix:///var/run/docker.sock', image: null, created_at: nowIso() }).execute();
  });
  afterAll(async () => {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('makes the ACME account key once and keeps it sealed', async () => {
    const key = await acmeAccountKey(db.kysely, secrets, serverId);
    expect(key).toContain('BEGIN EC PRIVATE KEY');
    expect(await acmeAccountKey(db.kysely, secrets, serverId)).toBe(key);
    const row = await db.kysely.selectFrom('docker_servers').select('acme_account_key').where('server_id', '=', serverId).executeTakeFirstOrThrow();
    expect(isSealed(row.acme_account_key!)).toBe(true);
  });

  it('reads an operator certificate\'s names, refuses a key of another, and keeps the key sealed', async () => {
    const read = readServerCertificate(certificates.serverCertPem, certificates.serverKeyPem);
    expect(read.hostnames).toEqual(['localhost', '*.apps.example.com']);
    expect(() => readServerCertificate(certificates.serverCertPem, makeTestCertificates().serverKeyPem)).toThrow('the key does not belong to the certificate.');
    expect(() => readServerCertificate('nope', certificates.serverKeyPem)).toThrow('not a PEM certificate');
    await setServerCertificate(db.kysely, secrets, serverId, read);
    const row = await db.kysely.selectFrom('docker_servers').select('tls_key').where('server_id', '=', serverId).executeTakeFirstOrThrow();
    expect(isSealed(row.tls_key!)).toBe(true);
    expect((await serverCertificate(db.kysely, secrets, serverId))?.keyPem).toBe(certificates.serverKeyPem);
  });

  it('seals both anew under a new secrets key, and the old key is then only a previous one', async () => {
    const accountKey = await acmeAccountKey(db.kysely, secrets, serverId);
    const oldKey = readFileSync(join(dataDir, SECRETS_KEY_FILE), 'utf8').trim();
    const rotated = new SecretBox(loadSecretsKeys(dataDir, { TEAMINFRA_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'), TEAMINFRA_SECRETS_KEY_PREVIOUS: oldKey }));
    expect(await resealProxySecrets(db.kysely, rotated)).toBe(2);
    expect(await resealProxySecrets(db.kysely, rotated)).toBe(0);
    expect(await acmeAccountKey(db.kysely, rotated, serverId)).toBe(accountKey);
    expect((await serverCertificate(db.kysely, rotated, serverId))?.hostnames).toContain('*.apps.example.com');
  });
});
