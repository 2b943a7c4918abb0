// Setting a team's off-site destination against a real S3-compatible store (Ceph's radosgw,
// which checks every signature): saved only once a test object was written, read back and
// deleted; a wrong secret, a missing bucket or a private endpoint refused with a sentence; the
// secret and the team's backup key kept sealed; the key handed back once, with the first destination.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { DestinationRefusal, openBackupIdentity, openDestination, setBackupDestination, type DestinationInput } from '../../src/offsite/destinations.js';
import { startTestServer, type TestServer } from '../support/fixtures.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';

describe.runIf(objectStoreInstalled)('setBackupDestination', () => {
  let store: TestObjectStore;
  let server: TestServer;
  const input = (change: Partial<DestinationInput> = {}): DestinationInput => ({
    endpoint: store.endpoint, region: store.region, bucket: store.bucket, prefix: 'team-a', accessKeyId: store.accessKeyId,
    secretAccessKey: store.secretAccessKey, allowPrivate: true, ...change,
  });
  const newTeam = (name: string) => insertTeam(server.app.db.kysely, { name, plan: 'starter', timezone: 'UTC' });
  const refusal = async (teamId: string, change: Partial<DestinationInput>) => {
    const error = await setBackupDestination(server.app.db.kysely, server.app.secrets, teamId, input(change)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DestinationRefusal);
    return (error as Error).message;
  };

  beforeAll(async () => {
    [store, server] = await Promise.all([startObjectStore(), startTestServer()]);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });

  it('saves a destination the store accepts, leaves no test object, and gives the team its backup key only the first time', async () => {
    const teamId = await newTeam('Keyed');
    const first = await setBackupDestination(server.app.db.kysely, server.app.secrets, teamId, input());
    expect(first.backupKey?.identity).toMatch(/^AGE-SECRET-KEY-1[0-9A-Z]+$/);
    expect(first.backupKey?.recipient).toMatch(/^age1[0-9a-z]+$/);
    const second = await setBackupDestination(server.app.db.kysely, server.app.secrets, teamId, input({ prefix: 'team-a/again/' }));
    expect(second.backupKey).toBeNull();
    // The key that opens the copies is still the first one.
    expect(await openBackupIdentity(server.app.db.kysely, server.app.secrets, teamId)).toBe(first.backupKey?.identity);
    const opened = await openDestination(server.app.db.kysely, server.app.secrets, second.destinationId);
    expect(opened).toMatchObject({ prefix: 'team-a/again/', secretAccessKey: store.secretAccessKey, bucket: store.bucket });
    const listed = await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: 'team-a' }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it('keeps the secret access key and the backup key sealed in the database', async () => {
    const teamId = await newTeam('Sealed');
    const saved = await setBackupDestination(server.app.db.kysely, server.app.secrets, teamId, input());
    const row = await server.app.db.kysely.selectFrom('backup_destinations').selectAll().where('id', '=', saved.destinationId).executeTakeFirstOrThrow();
    expect(row.secret_access_key).toMatch(/^tsec1:/);
    expect(JSON.stringify(row)).not.toContain(store.secretAccessKey);
    const key = await server.app.db.kysely.selectFrom('team_backup_keys').selectAll().where('team_id', '=', teamId).executeTakeFirstOrThrow();
    expect(key.identity).toMatch(/^tsec1:/);
    expect(JSON.stringify(key)).not.toContain(saved.backupKey!.identity);
  });

  it('refuses a wrong secret access key, saying so, and saves nothing', async () => {
    const teamId = await newTeam('Wrong secret');
    expect(await refusal(teamId, { secretAccessKey: 'not-the-secret' })).toBe(
      'Checking the destination by writing a test object failed: the store refused the access key id or the secret access key (SignatureDoesNotMatch). The destination was not saved.');
    expect(await server.app.db.kysely.selectFrom('backup_destinations').select('id').where('team_id', '=', teamId).execute()).toEqual([]);
    expect(await server.app.db.kysely.selectFrom('team_backup_keys').select('team_id').where('team_id', '=', teamId).execute()).toEqual([]);
  });

  it('refuses a bucket that does not exist, naming it', async () => {
    const teamId = await newTeam('No bucket');
    expect(await refusal(teamId, { bucket: 'no-such-bucket' })).toBe(
      `Checking the destination by writing a test object failed: the bucket "no-such-bucket" does not exist at ${store.endpoint}. The destination was not saved.`);
  });

  it('refuses a loopback endpoint unless the operator allows private ones, and http with it', async () => {
    const teamId = await newTeam('Private');
    expect(await refusal(teamId, { allowPrivate: false })).toBe('The endpoint must use https.');
    expect(await refusal(teamId, { allowPrivate: false, endpoint: 'https://127.0.0.1:9' })).toBe(
      'The endpoint points to a private, loopback or link-local address, which is not allowed.');
    expect(await refusal(teamId, { endpoint: `${store.endpoint}/bucket` })).toMatch(/^The endpoint is the store's address only/);
  });

  it('refuses a malformed bucket, region or prefix with a sentence naming the field', async () => {
    const teamId = await newTeam('Malformed');
    expect(await refusal(teamId, { bucket: 'Bad_Bucket' })).toMatch(/^The bucket is an S3 bucket name/);
    expect(await refusal(teamId, { region: 'us east' })).toMatch(/^The region is a name/);
    expect(await refusal(teamId, { prefix: '../up' })).toMatch(/^The prefix is a folder/);
    expect(await refusal(teamId, { secretAccessKey: '' })).toBe('The secret access key is required, on one line.');
  });
});
