// Setting a team's off-site destination (the panel's Backups page and `teaminfra admin
// set-backup-destination`, never a token): checked as written (the webhooks' URL guard), then
// against the store itself (a small object written, read back and deleted), then kept with its
// secret sealed; the team's backup key is made with its first destination and handed back once.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { nowIso } from '../db/ids.js';
import type { Database } from '../db/tables.js';
import {
  findBackupKey, findCurrentDestination, findDestinationById, insertBackupKeyOnce, replaceDestination, type DestinationRow,
} from '../db/repositories/backup-destinations.js';
import { moveUnstoredCopies } from '../db/repositories/offsite-copies.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { checkOutboundUrl, UnsafeUrl } from '../webhooks/url-safety.js';
import { makeBackupKey, type BackupKey } from './backup-key.js';
import { ObjectStore, type StoreAddress } from './object-store.js';
import { storeFailureOf } from './store-failure.js';

export interface DestinationInput {
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The operator allowed a loopback or private endpoint (--allow-private, TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE=1). */
  allowPrivate: boolean;
}

/** A destination not saved; the message is the sentence to show. */
export class DestinationRefusal extends Error {}

/** What anyone may see of a destination: everything but its secret. */
export type DestinationSummary = Pick<DestinationRow, 'endpoint' | 'region' | 'bucket' | 'prefix' | 'access_key_id' | 'created_at'>;

/** TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE=1: the panel accepts a loopback or private endpoint (the operator's own store). */
export function destinationPrivateAllowedFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE === '1';
}

export function secretContext(destinationId: string): string {
  return `backup-destination:${destinationId}`;
}

export function backupKeyContext(teamId: string): string {
  return `team-backup-key:${teamId}`;
}

/** Saves the destination once the store accepted a test object; `backupKey` is the team's new key when this made it (shown once), else null. */
export async function setBackupDestination(
  db: Kysely<Database>, secrets: SecretBox, teamId: string, written: DestinationInput,
): Promise<{ destinationId: string; backupKey: BackupKey | null }> {
  const input = validDestination(written);
  await checkStore(input);
  const made = await makeBackupKey();
  const at = nowIso();
  const id = `bdst_${randomBytes(10).toString('hex')}`;
  return inWriteTransaction(db, async (trx) => {
    const kept = (await findBackupKey(trx, teamId)) === undefined
      && await insertBackupKeyOnce(trx, { team_id: teamId, recipient: made.recipient, identity: secrets.seal(made.identity, backupKeyContext(teamId)), created_at: at });
    await replaceDestination(trx, {
      id, team_id: teamId, endpoint: input.endpoint, region: input.region, bucket: input.bucket, prefix: input.prefix,
      access_key_id: input.accessKeyId, secret_access_key: secrets.seal(input.secretAccessKey, secretContext(id)),
      allow_private: input.allowPrivate ? 1 : 0, created_at: at, replaced_at: null,
    });
    await moveUnstoredCopies(trx, teamId, { id, prefix: input.prefix }, at);
    return { destinationId: id, backupKey: kept ? made : null };
  });
}

export async function destinationSummary(db: Kysely<Database>, teamId: string): Promise<DestinationSummary | null> {
  const row = await findCurrentDestination(db, teamId);
  return row ? { endpoint: row.endpoint, region: row.region, bucket: row.bucket, prefix: row.prefix, access_key_id: row.access_key_id, created_at: row.created_at } : null;
}

/** Where a destination is and how to sign in to it (its secret opened), with its prefix. */
export async function openDestination(db: Kysely<Database>, secrets: SecretBox, destinationId: string): Promise<StoreAddress & { prefix: string }> {
  const row = await findDestinationById(db, destinationId);
  if (!row) throw new Error(`backup destination ${destinationId} is gone`);
  return {
    endpoint: row.endpoint, region: row.region, bucket: row.bucket, prefix: row.prefix, accessKeyId: row.access_key_id,
    secretAccessKey: secrets.reveal(row.secret_access_key, secretContext(row.id)), allowPrivate: row.allow_private === 1,
  };
}

/** The team's key's identity, opened (for a restore from off-site). */
export async function openBackupIdentity(db: Kysely<Database>, secrets: SecretBox, teamId: string): Promise<string> {
  const row = await findBackupKey(db, teamId);
  if (!row) throw new Error(`team ${teamId} has no backup key`);
  return secrets.reveal(row.identity, backupKeyContext(teamId));
}

/** Seals with the current key every destination secret and backup key sealed with a previous one; at start. */
export async function resealDestinationSecrets(db: Kysely<Database>, secrets: SecretBox): Promise<number> {
  let changed = 0;
  for (const row of await db.selectFrom('backup_destinations').select(['id', 'secret_access_key']).execute()) {
    const sealed = secrets.resealed(row.secret_access_key, secretContext(row.id));
    if (sealed === undefined) continue;
    await db.updateTable('backup_destinations').set({ secret_access_key: sealed }).where('id', '=', row.id).where('secret_access_key', '=', row.secret_access_key).execute();
    changed += 1;
  }
  for (const row of await db.selectFrom('team_backup_keys').select(['team_id', 'identity']).execute()) {
    const sealed = secrets.resealed(row.identity, backupKeyContext(row.team_id));
    if (sealed === undefined) continue;
    await db.updateTable('team_backup_keys').set({ identity: sealed }).where('team_id', '=', row.team_id).where('identity', '=', row.identity).execute();
    changed += 1;
  }
  return changed;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[A-Za-z0-9_-]{1,64}$/;
const PREFIX = /^[A-Za-z0-9._\-/]{0,200}$/;
const KEY_ID = /^[\x21-\x7e]{1,128}$/;

function validDestination(input: DestinationInput): DestinationInput {
  let url: URL;
  try {
    url = checkOutboundUrl(input.endpoint.trim(), { allowHttp: input.allowPrivate, allowPrivate: input.allowPrivate }, 'The endpoint');
  } catch (error) {
    if (error instanceof UnsafeUrl) throw new DestinationRefusal(error.message);
    throw error;
  }
  if (url.pathname !== '/' || url.search || url.hash) throw new DestinationRefusal('The endpoint is the store\'s address only (https://host[:port]), without a path: the bucket is given apart.');
  if (!REGION.test(input.region)) throw new DestinationRefusal('The region is a name such as us-east-1 (letters, digits, "-" and "_").');
  if (!BUCKET.test(input.bucket)) throw new DestinationRefusal('The bucket is an S3 bucket name: 3 to 63 lower-case letters, digits, "." and "-".');
  if (!PREFIX.test(input.prefix) || input.prefix.startsWith('/') || input.prefix.includes('//') || input.prefix.split('/').includes('..')) {
    throw new DestinationRefusal('The prefix is a folder in the bucket such as teaminfra/ (letters, digits, ".", "_", "-" and "/"; no leading "/", no "..").');
  }
  if (!KEY_ID.test(input.accessKeyId)) throw new DestinationRefusal('The access key id is required, without spaces.');
  if (input.secretAccessKey === '' || input.secretAccessKey.length > 256 || /[\r\n]/.test(input.secretAccessKey)) {
    throw new DestinationRefusal('The secret access key is required, on one line.');
  }
  const prefix = input.prefix === '' || input.prefix.endsWith('/') ? input.prefix : `${input.prefix}/`;
  return { ...input, endpoint: url.origin, prefix };
}

/** A small object written, read back and deleted, each step's failure said in a sentence. */
async function checkStore(input: DestinationInput): Promise<void> {
  const store = await ObjectStore.open(input);
  const key = `${input.prefix}teaminfra-check-${randomBytes(8).toString('hex')}`;
  const body = randomBytes(32);
  const step = async <T>(doing: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw new DestinationRefusal(`${storeFailureOf(error, doing, input).sentence} The destination was not saved.`);
    }
  };
  try {
    await step('Checking the destination by writing a test object', () => store.write(key, body));
    const read = await step('Checking the destination by reading the test object back', async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of await store.read(key)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    });
    if (!read.equals(body)) throw new DestinationRefusal('Checking the destination failed: the test object read back was not the one written. The destination was not saved.');
    await step('Checking the destination by deleting the test object', () => store.remove(key));
  } finally {
    store.close();
  }
}
