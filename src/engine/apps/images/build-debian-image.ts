// One offline image from its recipe (image-recipes.ts): the cached Debian root unpacked into a
// scratch directory, the recipe's packages installed with apt-get inside it (chroot, as root:
// no daemon starts, policy-rc.d forbids it), our files added, then the whole root sent as a tar
// to the engine's import endpoint with the recipe's settings (`docker import --change`). The
// result is tagged with the recipe's content (`teaminfra-tryton:6.0-<hash>`) and with the name
// the definition uses (`teaminfra-tryton:6.0`). The same recipe again is a lookup on the engine,
// or an import of the cached tarball on another engine: apt runs once per recipe and machine.
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, createReadStream, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../../package-root.js';
import { DockerError, type DockerApi } from '../../docker/docker-api.js';
import { baseRootTarball, cacheDirs, DEBIAN_SUITE, type CacheDirs } from './debian-root.js';
import type { DebianImageRecipe } from './image-recipes.js';
import { runProgram } from './run-program.js';
import { partialPath, removeStaleScratch, scratchPrefix } from './stale-scratch.js';
import { unmountUnder } from './unmount-under.js';

const FILES_DIR = join(packageRoot, 'src', 'engine', 'apps', 'images', 'files');

export interface BuiltImage {
  /** The name the definition uses. */
  image: string;
  /** The same image under its content tag. */
  contentImage: string;
  /** False when the engine already had it. */
  built: boolean;
}

export async function buildDebianImage(api: DockerApi, recipe: DebianImageRecipe, log: (line: string) => void, dirs: CacheDirs = cacheDirs()): Promise<BuiltImage> {
  const [repository, tag] = splitImage(recipe.image);
  const contentTag = `${tag}-${recipeHash(recipe)}`;
  const contentImage = `${repository}:${contentTag}`;
  const exists = await api.json<{ Id: string } | undefined>('GET', `/images/${encodeURIComponent(contentImage)}/json`, { accept: [404] });
  let built = false;
  if (!exists) {
    const tarball = join(dirs.images, `${repository}_${contentTag}.tar`);
    if (!existsSync(tarball)) {
      await removeStaleScratch([dirs.work, dirs.images, dirs.root]);
      await makeRootTarball(recipe, tarball, dirs, log);
      // An earlier recipe's tarball of the same image is kept by no one: its tag is gone from the recipe.
      for (const name of readdirSync(dirs.images)) {
        if (name.startsWith(`${repository}_${tag}-`) && name.endsWith('.tar') && join(dirs.images, name) !== tarball) rmSync(join(dirs.images, name), { force: true });
      }
    }
    log(`importing ${contentImage} into the engine at ${api.address.text}`);
    await importTarball(api, tarball, repository, contentTag, recipe);
    built = true;
  }
  await api.json('POST', `/images/${encodeURIComponent(contentImage)}/tag`, { query: { repo: repository, tag } });
  return { image: recipe.image, contentImage, built };
}

async function makeRootTarball(recipe: DebianImageRecipe, tarball: string, dirs: CacheDirs, log: (line: string) => void): Promise<void> {
  const base = await baseRootTarball(dirs, log);
  const work = mkdtempSync(join(dirs.work, scratchPrefix('image')));
  const partial = partialPath(tarball);
  const root = join(work, 'root');
  try {
    mkdirSync(root);
    await runProgram(['tar', '-C', root, '--numeric-owner', '-xf', base], { timeoutMs: 10 * 60_000, what: 'unpack the Debian root' });
    // No service may start inside the chroot while its package is configured.
    writeFileSync(join(root, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    const archives = join(root, 'var/cache/apt/archives');
    linkDebs(dirs.debs, archives);
    const apt = (args: string[], what: string, timeoutMs: number) => runProgram(['chroot', root, 'apt-get', ...args], {
      timeoutMs, what, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', DEBIAN_FRONTEND: 'noninteractive', LANG: 'C.UTF-8', HOME: '/root' },
    });
    log(`apt-get install ${recipe.packages.join(' ')} (for ${recipe.image})`);
    await apt(['update', '-q'], `read the package lists of ${DEBIAN_SUITE}`, 5 * 60_000);
    await apt(['install', '-y', '-q', '--no-install-recommends', ...recipe.packages], `install ${recipe.packages.join(', ')}`, 30 * 60_000);
    linkDebs(archives, dirs.debs);
    for (const file of recipe.files) {
      mkdirSync(join(root, dirname(file.target)), { recursive: true });
      copyFileSync(join(FILES_DIR, file.source), join(root, file.target));
      chmodSync(join(root, file.target), file.mode);
    }
    for (const dir of recipe.directories) {
      await runProgram(['chroot', root, 'install', '-d', '-o', dir.owner, '-g', dir.owner, '-m', dir.mode.toString(8), dir.path],
        { timeoutMs: 60_000, what: `make ${dir.path} for ${dir.owner}` });
    }
    await apt(['clean'], 'empty the package cache', 60_000);
    for (const path of [...recipe.remove, '/var/lib/apt/lists', '/usr/sbin/policy-rc.d']) rmSync(join(root, path), { recursive: true, force: true });
    mkdirSync(join(root, 'var/lib/apt/lists/partial'), { recursive: true });
    log(`packing ${recipe.image}`);
    await runProgram(['tar', '-C', root, '--numeric-owner', '-cf', partial, '.'], { timeoutMs: 10 * 60_000, what: `pack ${recipe.image}` });
    renameSync(partial, tarball);
  } finally {
    await unmountUnder(work);
    rmSync(work, { recursive: true, force: true });
    rmSync(partial, { force: true });
  }
}

async function importTarball(api: DockerApi, tarball: string, repository: string, tag: string, recipe: DebianImageRecipe): Promise<void> {
  const { changes } = recipe;
  const settings = [
    `LABEL ${Object.entries(changes.labels).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(' ')}`,
    `CMD ${JSON.stringify(changes.cmd)}`, `USER ${changes.user}`, `WORKDIR ${changes.workdir}`,
    ...Object.entries(changes.env).map(([key, value]) => `ENV ${key}=${value}`),
    ...(changes.expose ? [`EXPOSE ${changes.expose}/tcp`] : []),
  ];
  const answer = await api.upload('POST', '/images/create', createReadStream(tarball), 'application/x-tar', {
    query: { fromSrc: '-', repo: repository, tag, changes: settings }, timeoutMs: 15 * 60_000,
  });
  // The import answers 200 and reports a failure inside its progress stream.
  const failure = answer.split('\n').map((line) => line.trim()).filter(Boolean)
    .map((line) => JSON.parse(line) as { error?: string }).find((line) => line.error);
  if (failure) throw new DockerError(`The Docker engine at ${api.address.text} could not import ${repository}:${tag}: ${failure.error}`, null);
}

/** Hard links (copies across file systems) of the .deb files `from` has and `to` lacks. */
function linkDebs(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (!name.endsWith('.deb') || existsSync(join(to, name))) continue;
    try {
      linkSync(join(from, name), join(to, name));
    } catch {
      copyFileSync(join(from, name), join(to, name));
    }
  }
}

/** The recipe and the bytes of the files it adds: changing either gives a new content tag. */
export function recipeHash(recipe: DebianImageRecipe): string {
  const hash = createHash('sha256').update(DEBIAN_SUITE).update(JSON.stringify(recipe));
  for (const file of recipe.files) hash.update(file.target).update(readFileSync(join(FILES_DIR, file.source)));
  return hash.digest('hex').slice(0, 12);
}

export function splitImage(image: string): [string, string] {
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? [image.slice(0, colon), image.slice(colon + 1)] : [image, 'latest'];
}
