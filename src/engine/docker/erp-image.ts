// `teaminfra admin build-erp-image`: the bundled ERP application as a container image, built
// offline on the engine itself. There is no base image to pull (no registry is reachable from
// where teams run us, nor from CI): the image's whole file system is this Node binary, the
// shared libraries it and the SQLite addon link against (as `ldd` lists them), our compiled
// application and its one native dependency, sent as a tar to the engine's import endpoint
// with the image contract (erp-image-contract.ts) as labels. Same content, same tag: a second
// build on the same engine is a lookup.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { pack as tarPack, type Pack } from 'tar-stream';
import { packageRoot } from '../../package-root.js';
import { DockerError, type DockerApi } from './docker-api.js';
import { BUNDLED_IMAGE_LABELS, BUNDLED_IMAGE_REPOSITORY, BUNDLED_IMAGE_COMMAND } from './erp-image-contract.js';

interface ImageFile {
  /** Absolute path inside the image. */
  target: string;
  source: string;
  mode: number;
}

/** Builds the image unless this engine already has the same one; returns its name. */
export async function buildErpImage(api: DockerApi): Promise<{ image: string; built: boolean }> {
  const files = imageFiles();
  const image = `${BUNDLED_IMAGE_REPOSITORY}:${contentTag(files)}`;
  const existing = await api.json<{ Id: string }>('GET', `/images/${encodeURIComponent(image)}/json`, { accept: [404] });
  if (existing) return { image, built: false };
  const tar = tarPack();
  const writing = writeRootFs(tar, files);
  const changes = [
    `LABEL ${Object.entries(BUNDLED_IMAGE_LABELS).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(' ')}`,
    `CMD ${JSON.stringify(BUNDLED_IMAGE_COMMAND)}`, 'WORKDIR /app', 'EXPOSE 8080/tcp', 'ENV NODE_ENV=production',
  ];
  const [answer] = await Promise.all([
    api.upload('POST', '/images/create', Readable.from(tar), 'application/x-tar', {
      query: { fromSrc: '-', repo: BUNDLED_IMAGE_REPOSITORY, tag: image.split(':')[1], changes }, timeoutMs: 300_000,
    }),
    writing,
  ]);
  // The import answers 200 and reports a failure inside its progress stream.
  const failure = answer.split('\n').map((line) => line.trim()).filter(Boolean)
    .map((line) => JSON.parse(line) as { error?: string }).find((line) => line.error);
  if (failure) throw new DockerError(`The Docker engine at ${api.address.text} could not import the ERP image: ${failure.error}`, null);
  return { image, built: true };
}

/** Everything the image holds: node, its libraries, the application and better-sqlite3. */
function imageFiles(): ImageFile[] {
  const require = createRequire(join(packageRoot, 'package.json'));
  const sqliteRoot = dirname(require.resolve('better-sqlite3/package.json'));
  const addon = sqliteAddon(sqliteRoot);
  const files: ImageFile[] = [{ target: '/usr/local/bin/node', source: process.execPath, mode: 0o755 }];
  for (const library of new Set([...sharedLibraries(process.execPath), ...sharedLibraries(addon)])) {
    files.push({ target: library, source: realpathSync(library), mode: 0o755 });
  }
  const app = (dir: string, filter: (name: string) => boolean = () => true) =>
    filesUnder(join(packageRoot, dir)).filter(filter).map((source) => ({ target: `/app/${relative(packageRoot, source)}`, source, mode: 0o644 }));
  files.push(...app('dist/src/engine/erp-app', (name) => name.endsWith('.js')));
  // The front every Docker service is published through (service-front.ts), whatever image its revisions run.
  files.push(...app('dist/src/engine/front', (name) => name.endsWith('.js')));
  // The image's snapshot and verify commands use the local driver's snapshot code (which imports
  // only erp-app/database.js, already in the image): no compression runs in the container.
  const archiveModules = ['database-snapshot.js'];
  files.push(...app('dist/src/engine/local', (name) => archiveModules.some((module) => name.endsWith(`/${module}`))));
  // better-sqlite3's JavaScript finds its addon itself (lib/binding.js), at the same place in the image.
  const wanted = (source: string) => /\/(lib\/.+\.js|package\.json)$/.test(source) || source === addon;
  files.push(...filesUnder(sqliteRoot).filter(wanted)
    .map((source) => ({ target: `/app/node_modules/better-sqlite3/${relative(sqliteRoot, source)}`, source, mode: 0o644 })));
  files.push({ target: '/app/package.json', source: '', mode: 0o644 });
  return files;
}

/**
 * The addon better-sqlite3 loads on this machine, as its lib/binding.js chooses: one compiled on
 * purpose (build/Release), else the prebuilt Node-API one for this platform (prebuilds/linux-x64.node).
 */
function sqliteAddon(sqliteRoot: string): string {
  const compiled = join(sqliteRoot, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(compiled)) return compiled;
  const binding = createRequire(join(sqliteRoot, 'package.json'))(join(sqliteRoot, 'lib', 'binding.js')) as { getPrebuildPath(): string | null };
  const prebuilt = binding.getPrebuildPath();
  if (prebuilt === null) {
    throw new DockerError(`better-sqlite3 in ${sqliteRoot} has no addon for ${process.platform}-${process.arch}; the ERP image needs one.`, null);
  }
  return prebuilt;
}

/** The libraries `ldd` says `binary` loads, with the dynamic loader. */
function sharedLibraries(binary: string): string[] {
  let output: string;
  try {
    output = execFileSync('ldd', [binary], { encoding: 'utf8' });
  } catch (error) {
    throw new DockerError(`Cannot list the shared libraries of ${binary} with ldd (${(error as Error).message}); the ERP image needs them.`, null);
  }
  return output.split('\n').map((line) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1]).filter((path): path is string => path !== undefined);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name)).sort();
}

/** Package version and a hash of every file's path and bytes: rebuilding changed code gives a new tag. */
function contentTag(files: ImageFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(file.target).update(file.source ? readFileSync(file.source) : PACKAGE_JSON);
  const version = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  return `${version}-${hash.digest('hex').slice(0, 12)}`;
}

const PACKAGE_JSON = Buffer.from('{"type":"module","private":true}\n');

async function writeRootFs(tar: Pack, files: ImageFile[]): Promise<void> {
  try {
    const dirs = new Set<string>(['/tmp', '/data', '/app']);
    for (const file of files) for (let dir = dirname(file.target); dir !== '/'; dir = dirname(dir)) dirs.add(dir);
    for (const dir of [...dirs].sort()) {
      await entry(tar, { name: dir.slice(1), type: 'directory', mode: dir === '/tmp' ? 0o1777 : 0o755 });
    }
    for (const file of files) {
      const bytes = file.source ? readFileSync(file.source) : PACKAGE_JSON;
      await entry(tar, { name: file.target.slice(1), mode: file.mode, size: bytes.length, mtime: statMtime(file.source) }, bytes);
    }
    tar.finalize();
  } catch (error) {
    tar.destroy(error as Error);
  }
}

function statMtime(source: string): Date {
  return source ? statSync(source).mtime : new Date(0);
}

function entry(tar: Pack, header: Parameters<Pack['entry']>[0], body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    tar.entry(header, body ?? null as unknown as Buffer, (error) => (error ? reject(error) : resolve()));
  });
}
