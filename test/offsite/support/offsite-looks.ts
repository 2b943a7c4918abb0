// What the off-site suites look at as a team would: the object a backup became in the store,
// downloaded and opened with Debian's `age` and the team's key; the events the uploader wrote.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { Kysely } from 'kysely';
import type { Database } from '../../../src/db/tables.js';
import type { TestObjectStore } from './object-store-server.js';

/** The object of a backup's off-site copy, saved as `file`; its size. */
export async function downloadObject(store: TestObjectStore, key: string, file: string): Promise<void> {
  const got = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
  await pipeline(got.Body as Readable, createWriteStream(file));
}

export async function objectExists(store: TestObjectStore, key: string, bucket = store.bucket): Promise<boolean> {
  try {
    await store.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  }
}

export async function unfinishedUploads(store: TestObjectStore, prefix = ''): Promise<string[]> {
  const listed = await store.client.send(new ListMultipartUploadsCommand({ Bucket: store.bucket, Prefix: prefix }));
  return (listed.Uploads ?? []).map((upload) => upload.Key ?? '');
}

/** `age -d -i KEY OBJECT > out`, as the decrypt command the team is shown says; the SHA-256 of what it gave. */
export async function openedWithAge(identity: string, object: string, folder: string): Promise<{ file: string; sha256: string }> {
  const keyFile = join(folder, 'key.txt');
  writeFileSync(keyFile, `${identity}\n`, { mode: 0o600 });
  const file = join(folder, 'backup.tar.zst');
  execFileSync('age', ['-d', '-i', keyFile, '-o', file, object], { timeout: 300_000 });
  return { file, sha256: await sha256OfFile(file) };
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The off-site events of a backup, oldest first, as their payloads' data. */
export async function offsiteEvents(db: Kysely<Database>, backupId: string): Promise<{ type: string; state: string; reason: string | null }[]> {
  const rows = await db.selectFrom('events').select(['type', 'payload']).where('type', 'in', ['backup.offsite_stored', 'backup.offsite_failed'])
    .orderBy('id').execute();
  return rows.map((row) => ({ type: row.type, data: (JSON.parse(row.payload) as { data: { backup: { id: string }; location: { state: string; reason: string | null } } }).data }))
    .filter((row) => row.data.backup.id === backupId).map((row) => ({ type: row.type, state: row.data.location.state, reason: row.data.location.reason }));
}
