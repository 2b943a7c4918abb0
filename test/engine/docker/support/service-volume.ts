// A Docker service's database read and written from outside, as an operator would with
// `docker cp`: through a helper container that mounts the service's data volume. Used to give
// a service data of a real size (tens of megabytes) and to compare two services' data.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { extract, pack } from 'tar-stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../../../src/db/tables.js';
import { createHelper } from '../../../../src/engine/docker/containers.js';
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';

const DATA_DIR = '/data';
const DATABASE = 'erp.sqlite';

export interface VolumeOf {
  api: DockerApi;
  /** Where the service's volume is recorded; without it, the volume is found by its labels on the engine. */
  db?: Kysely<Database>;
  image: string;
  serverId: string;
}

async function volumeOf(where: VolumeOf, serviceId: string): Promise<string> {
  if (where.db) {
    const row = await where.db.selectFrom('docker_services').select('volume').where('service_id', '=', serviceId).executeTakeFirstOrThrow();
    return row.volume;
  }
  // A data directory this checkout's code must not open (the upgrade suite's, made by an earlier
  // version): the one volume the engine labels as the service's data, as it is between operations.
  // The labels spelled out: every version has written them so, and this must not follow a rename.
  const filters = JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`, 'io.teaminfra.role=data'] });
  const volumes = (await where.api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
  if (volumes.length !== 1) throw new Error(`service ${serviceId} has ${volumes.length} data volumes on the engine: ${volumes.map((each) => each.Name).join(', ')}`);
  return volumes[0]!.Name;
}

/**
 * The service's database file, copied out of its volume into a temporary file (removed by
 * `done`), with the owner and mode it has there. Its write-ahead log comes with it: a running
 * service's recent writes (its schema, on a first start) are there until SQLite checkpoints.
 */
export async function readServiceDatabase(where: VolumeOf, serviceId: string): Promise<{ file: string; owner: FileOwner; done(): void }> {
  const folder = mkdtempSync(join(tmpdir(), 'teaminfra-volume-'));
  const file = join(folder, DATABASE);
  const helper = await createHelper(where.api, { image: where.image, serviceId, serverId: where.serverId, mounts: [{ volume: await volumeOf(where, serviceId), at: DATA_DIR }] });
  let owner: FileOwner = { uid: 0, gid: 0, mode: 0o600 };
  try {
    const reader = extract();
    reader.on('entry', (header, stream, next) => {
      const name = header.name.replace(/^[^/]*\//, '');
      if (header.type !== 'file' || !name.startsWith(DATABASE) || name.includes('/')) {
        stream.resume();
        stream.on('end', next);
        return;
      }
      if (name === DATABASE) owner = { uid: header.uid ?? 0, gid: header.gid ?? 0, mode: header.mode ?? 0o600 };
      pipeline(stream, createWriteStream(join(folder, name))).then(() => next(), next);
    });
    await pipeline(await where.api.stream('GET', `/containers/${helper.id}/archive`, { query: { path: DATA_DIR } }), reader);
  } finally {
    await helper.remove();
  }
  return { file, owner, done: () => rmSync(folder, { recursive: true, force: true }) };
}

interface FileOwner { uid: number; gid: number; mode: number }

/** A tar of `file` named `name`, owned as given: how a file goes back into a volume as it was. */
function ownedFileTar(name: string, file: string, owner: FileOwner): Readable {
  const packer = pack();
  const entry = packer.entry({ name, size: statSync(file).size, ...owner }, (error) => (error ? packer.destroy(error) : packer.finalize()));
  createReadStream(file).pipe(entry as unknown as NodeJS.WritableStream);
  return Readable.from(packer);
}

/** Changes a stopped service's database with `edit`, and puts it back into its volume; its new size. */
export async function editServiceDatabase(where: VolumeOf, serviceId: string, edit: (sqlite: SQLite.Database) => void): Promise<number> {
  const database = await readServiceDatabase(where, serviceId);
  try {
    const sqlite = new SQLite(database.file);
    sqlite.transaction(() => edit(sqlite))();
    sqlite.close();
    const size = statSync(database.file).size;
    const helper = await createHelper(where.api, { image: where.image, serviceId, serverId: where.serverId, mounts: [{ volume: await volumeOf(where, serviceId), at: DATA_DIR }] });
    try {
      await where.api.upload('PUT', `/containers/${helper.id}/archive`, ownedFileTar(DATABASE, database.file, database.owner), 'application/x-tar', { query: { path: DATA_DIR } });
    } finally {
      await helper.remove();
    }
    return size;
  } finally {
    database.done();
  }
}

/** Grows a stopped service's database to about `bytes` with products whose random names compression cannot make small. */
export function growServiceDatabase(where: VolumeOf, serviceId: string, bytes: number): Promise<number> {
  return editServiceDatabase(where, serviceId, (sqlite) => {
    const insert = sqlite.prepare('INSERT INTO products (sku, name, price_cents, stock) VALUES (?, ?, ?, ?)');
    for (let row = 0; row < Math.ceil(bytes / 1_000); row++) insert.run(`BULK-${row}`, randomBytes(512).toString('hex'), row, row % 100);
  });
}

/** What a service's products are, as one digest: two services hold the same data when these are equal. */
export async function productsDigest(where: VolumeOf, serviceId: string): Promise<{ count: number; sha256: string }> {
  const database = await readServiceDatabase(where, serviceId);
  try {
    return digestOfDatabase(database.file);
  } finally {
    database.done();
  }
}

export function digestOfDatabase(file: string): { count: number; sha256: string } {
  const sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const hash = createHash('sha256');
    let count = 0;
    for (const row of sqlite.prepare('SELECT sku, name, price_cents, stock FROM products ORDER BY id').raw().iterate() as Iterable<unknown[]>) {
      hash.update(JSON.stringify(row));
      count += 1;
    }
    return { count, sha256: hash.digest('hex') };
  } finally {
    sqlite.close();
  }
}
