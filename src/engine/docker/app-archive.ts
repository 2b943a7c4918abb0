// The one archive a backup of an app's service is (a zstd-compressed tar, checksummed as every
// backup): first `teaminfra-app.json` (the app and its parts), then `database/` (what the
// definition's snapshot command wrote: for tryton, `pg_dump --format=custom` as tryton.dump),
// then `volumes/NAME/` for each volume of the app that is not the database's (the files the app
// keeps beside it). `tar --zstd -xf` gives every part back by hand. A service of an image's
// contract (contract-definition.ts) keeps the archive such services always had: the files of its
// one volume at the top, no manifest (readAppManifest tells the two apart).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract as tarExtract, pack as tarPack, type Header } from 'tar-stream';
import { DriverError } from '../driver.js';
import type { BackupCompression } from '../backup-files.js';
import { unpackedTar } from './archives.js';

export const MANIFEST_FILE = 'teaminfra-app.json';
export const DATABASE_PART = 'database/';

export function volumePart(volume: string): string {
  return `volumes/${volume}/`;
}

/** What the archive says it holds, checked before a restore or copy uses it. */
export interface AppArchiveManifest {
  format: 1;
  /**
   * Not in any archive: set by readAppManifest for a backup an image contract's service took
   * before archives had a manifest, whose top holds the files of its one volume.
   */
  filesAtTop?: boolean;
  app: string;
  /** The volumes the snapshot command's dump stands for (restored by the restore command). */
  databaseVolumes: string[];
  /** The volumes kept as files, each under volumes/NAME/. */
  fileVolumes: string[];
  /**
   * The image (engine id) of each of the app's containers when the backup was taken: data
   * restored under the same images needs no migration before its first start.
   */
  images?: Record<string, string>;
}

/** One part of the archive: the tar `open` answers (entries under one top directory, as the engine sends them), put under `prefix`. */
export interface ArchivePart {
  prefix: string;
  open(): Promise<Readable>;
  /**
   * True when the top directory is a command's working directory rather than the volume itself
   * (a snapshot command's files): its owner and mode are not the volume's, so it is left out.
   */
  withoutTop?: boolean;
}

/**
 * The whole archive as one tar stream: the manifest, then each part in turn, read one after the
 * other. `onFile`: told of each regular file of the parts. No manifest: an image contract's
 * archive, as such services always had it (one part, `prefix` '', the files at the top).
 */
export function appArchiveTar(manifest: AppArchiveManifest | null, parts: readonly ArchivePart[], onFile: () => void = () => undefined): Readable {
  const pack = tarPack();
  void (async () => {
    if (manifest) {
      const body = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
      await new Promise<void>((resolve, reject) => pack.entry({ name: MANIFEST_FILE, size: body.length, mode: 0o644 }, body, (error) => (error ? reject(error) : resolve())));
    }
    for (const part of parts) {
      const extract = tarExtract();
      extract.on('entry', (header, stream, next) => {
        const renamed = renamedHeader(header, /^\.?\/?[^/]+\/?/, part.prefix);
        if (part.withoutTop && renamed.name === part.prefix) {
          stream.on('end', next);
          stream.resume();
          return;
        }
        if (header.type === 'file') onFile();
        const entry = pack.entry(renamed, (error) => (error ? extract.destroy(error) : next()));
        stream.pipe(entry as unknown as NodeJS.WritableStream);
      });
      await pipeline(await part.open(), extract as unknown as NodeJS.WritableStream);
    }
    pack.finalize();
  })().catch((error: Error) => pack.destroy(error));
  return Readable.from(pack);
}

/** The entries of `tar` under `prefix`, renamed to start with `replacement` instead; the rest skipped. */
export function archivePart(tar: Readable, prefix: string, replacement: string): Readable {
  const extract = tarExtract();
  const pack = tarPack();
  extract.on('entry', (header, stream, next) => {
    if (!header.name.startsWith(prefix) || (replacement === '' && header.name === prefix)) {
      stream.on('end', next);
      stream.resume();
      return;
    }
    const entry = pack.entry(renamedHeader(header, prefix, replacement), (error) => (error ? extract.destroy(error) : next()));
    stream.pipe(entry as unknown as NodeJS.WritableStream);
  });
  extract.on('finish', () => pack.finalize());
  extract.on('error', (error: Error) => pack.destroy(error));
  tar.on('error', (error) => extract.destroy(error));
  tar.pipe(extract as unknown as NodeJS.WritableStream);
  return Readable.from(pack);
}

function renamedHeader(header: Header, from: string | RegExp, to: string): Header {
  const rename = (name: string) => `${to}${name.replace(from, '')}`;
  // A hard link names another entry of the same archive, which moves with it.
  return { ...header, name: rename(header.name), ...(header.type === 'link' && header.linkname ? { linkname: rename(header.linkname) } : {}) };
}

/**
 * The manifest of an archive verifyArchive checked: its first entry, or a sentence saying the
 * backup is not of an app's service. `withoutManifest`: what an archive without one holds (an
 * image contract's service's backup from before manifests: the files of its one volume).
 */
export async function readAppManifest(file: string, compression: BackupCompression, withoutManifest?: AppArchiveManifest): Promise<AppArchiveManifest> {
  const tar = unpackedTar(file, compression);
  const extract = tarExtract();
  let manifest: AppArchiveManifest | undefined;
  let sawManifestEntry = false;
  const first = new Promise<void>((resolve, reject) => {
    extract.once('entry', (header, stream) => {
      if (header.name !== MANIFEST_FILE) {
        stream.resume();
        resolve();
        return;
      }
      sawManifestEntry = true;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        try {
          manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AppArchiveManifest;
        } catch {
          manifest = undefined;
        }
        resolve();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  tar.pipe(extract as unknown as NodeJS.WritableStream);
  try {
    await first;
  } finally {
    tar.destroy();
    extract.destroy();
  }
  if (!manifest && !sawManifestEntry && withoutManifest) return { ...withoutManifest, filesAtTop: true };
  if (!manifest || manifest.format !== 1 || typeof manifest.app !== 'string' || !Array.isArray(manifest.fileVolumes) || !Array.isArray(manifest.databaseVolumes)) {
    throw new DriverError(`The backup was not taken of a service of an app (it has no ${MANIFEST_FILE} first), so it cannot be restored into one.`);
  }
  return manifest;
}
