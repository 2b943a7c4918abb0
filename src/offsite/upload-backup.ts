// One attempt at a backup's off-site copy: the server's copy is read (checked against the
// backup's SHA-256 on the way), encrypted to the team's key as it is read, and streamed to the
// store as a multipart upload; a byte that does not match fails the stream before the upload is
// completed, so the store never completes a wrong object. Only once the store says it holds the
// object, of exactly the size sent, is the copy stored (offsite-uploader.ts writes that).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { findBackupKey } from '../db/repositories/backup-destinations.js';
import type { OffsiteCopyRow } from '../db/repositories/offsite-copies.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { encrypting } from './backup-key.js';
import { openDestination } from './destinations.js';
import { ObjectStore } from './object-store.js';
import { StoreFailure, storeFailureOf } from './store-failure.js';

export interface OffsiteSource {
  /** The backup's bytes in a local file until release (the node's copy, fetched from the engine when needed: docker/backup-store.ts). */
  hold(backup: { path: string; sha256: string }): Promise<{ path: string; release(): void }>;
}

/** Uploads the copy; its encrypted size once the store confirmed it. Throws a StoreFailure saying what failed. */
export async function uploadOffsiteCopy(
  db: Kysely<Database>, secrets: SecretBox, source: OffsiteSource, copy: OffsiteCopyRow, backup: { file_path: string; sha256: string }, signal: AbortSignal,
): Promise<number> {
  const key = await findBackupKey(db, copy.team_id);
  if (!key) throw new StoreFailure('The team has no backup key, so the backup could not be encrypted.', false);
  const destination = await openDestination(db, secrets, copy.destination_id);
  let held: { path: string; release(): void };
  try {
    held = await source.hold({ path: backup.file_path, sha256: backup.sha256 });
  } catch (error) {
    const reason = (error as { reason?: unknown }).reason;
    throw new StoreFailure(`The server's copy of the backup could not be read (${typeof reason === 'string' ? reason.replace(/\.$/, '') : 'an internal error; it has been logged'}).`, true, { cause: error });
  }
  const store = await ObjectStore.open(destination);
  const where = { endpoint: destination.endpoint, bucket: destination.bucket };
  try {
    try {
      await store.abandonUnfinished(copy.object_key);
    } catch (error) {
      throw storeFailureOf(error, 'Uploading the encrypted backup', where);
    }
    const counted = countingStream();
    const checked = checkedAgainst(backup.sha256);
    const file = createReadStream(held.path);
    const plain = file.pipe(checked.stream);
    file.on('error', (error) => plain.destroy(error));
    const encrypted = await encrypting(plain, key.recipient);
    encrypted.on('error', (error) => counted.stream.destroy(error));
    encrypted.pipe(counted.stream);
    try {
      await store.put(copy.object_key, counted.stream, signal);
    } catch (error) {
      if (checked.mismatched()) throw new StoreFailure(MISMATCH, false, { cause: error });
      throw storeFailureOf(error, 'Uploading the encrypted backup', where);
    } finally {
      file.destroy();
    }
    let stored: number | null;
    try {
      stored = await store.sizeOf(copy.object_key);
    } catch (error) {
      throw storeFailureOf(error, 'Confirming the uploaded backup', where);
    }
    if (stored !== counted.bytes()) {
      throw new StoreFailure(`The store holds ${stored === null ? 'no object' : `${stored} bytes`} where ${counted.bytes()} were sent, so the copy is not counted as stored.`, true);
    }
    return stored;
  } finally {
    store.close();
    held.release();
  }
}

const MISMATCH = "The server's copy of the backup does not match its SHA-256 checksum, so it was not sent off-site.";

/** Passes bytes through, and fails at their end (before the upload can complete) when their SHA-256 is not `sha256`. */
function checkedAgainst(sha256: string): { stream: Transform; mismatched(): boolean } {
  const hash = createHash('sha256');
  let mismatched = false;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      mismatched = hash.digest('hex') !== sha256;
      callback(mismatched ? new Error(MISMATCH) : null);
    },
  });
  return { stream, mismatched: () => mismatched };
}

function countingStream(): { stream: Transform; bytes(): number } {
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  return { stream, bytes: () => bytes };
}
