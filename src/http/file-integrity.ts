// A file of this node offered for download (a local backup) is checked against the size and
// SHA-256 recorded when it was made before any byte of it is served: a file damaged on disk is
// refused (409, saying so), never sent as 200 with the recorded digest, which the client would
// believe. Reading a backup through costs a pass over it, so a file found intact is not read
// again until it changes (its size, mtime or inode): a download after the first costs a stat.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FileSource } from '../core/capability.js';
import { AppError } from '../core/errors.js';

/** Path -> the stat signature the file had when it was last found intact. */
const foundIntact = new Map<string, string>();
const MAX_REMEMBERED = 10_000;

export async function assertIntact(path: string, file: Pick<FileSource, 'filename' | 'sha256' | 'sizeBytes'>): Promise<void> {
  const stats = await stat(path);
  const signature = `${stats.size}:${stats.mtimeMs}:${stats.ino}`;
  if (foundIntact.get(path) === signature) return;
  if (stats.size !== file.sizeBytes || (file.sha256 && await sha256Of(path) !== file.sha256)) {
    foundIntact.delete(path);
    throw new AppError('conflict', `${file.filename} is damaged on the server: its contents no longer match the checksum ` +
      'recorded when it was made, so it is not served. Take a new backup.', {}, `damaged file: ${path}`);
  }
  if (foundIntact.size >= MAX_REMEMBERED) foundIntact.clear();
  foundIntact.set(path, signature);
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
