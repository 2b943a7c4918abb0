// Runs a CommonJS file the build made (the bundle of `teaminfra mcp`) with a V8 code cache of its
// whole start, kept beside it.
// Node's own compile cache (module.enableCompileCache) is taken when a module is compiled, before
// it runs: it holds the module's top level, and none of the functions V8 compiles only when they
// are first called. A start of `teaminfra mcp` calls about 900 of them (zod's, the SDK's, ours),
// and parsed and compiled each of them again at every start. A cache taken once the start is done
// holds them all (src/mcp/README.md, "Stdio start", has the figures).
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';
import { crc32 } from 'node:zlib';

export interface CodeCachedScript<T> {
  readonly exports: T;
  /** Whether V8 took the cache read beside the file (false: none, another build's, or refused). */
  readonly cacheAccepted: boolean;
  /**
   * Writes the code cache of all that is compiled so far, when the cache read was not accepted.
   * Called once the start is done. A cache that cannot be written only costs the next start its
   * saving: this never throws.
   */
  saveCodeCache(): void;
}

/**
 * The cache file: the CRC-32 of the source it was made from, the CRC-32 of V8's cached data, then
 * that data. V8 does not check the data itself in a release build: damaged data (a disk error, a
 * partial copy) is fatal to the process, so it is checked here first.
 */
export const codeCacheFileOf = (file: string) => `${file}.code-cache`;
const HEADER_BYTES = 8;

/**
 * Runs `file` as a CommonJS module. `shared` maps the specifiers the file requires that must be
 * the instances already loaded (ES modules the caller imported) to those modules.
 */
export function runCodeCached<T>(file: string, shared: Readonly<Record<string, unknown>>): CodeCachedScript<T> {
  const source = readFileSync(file);
  // V8 checks the cache against the source's length only: a cache of another build with the
  // same length would run that build's code. The CRC ties it to these exact bytes.
  const sourceCrc = crc32(source);
  const cachePath = codeCacheFileOf(file);
  const cachedData = cacheFor(cachePath, sourceCrc);
  const script = new vm.Script(module.wrap(source.toString('utf8')), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const cacheAccepted = cachedData !== undefined && !script.cachedDataRejected;
  const nodeRequire = module.createRequire(file);
  const requireFromFile = Object.assign((id: string) => (Object.hasOwn(shared, id) ? shared[id] : nodeRequire(id)), nodeRequire);
  const moduleObject = { exports: {} as T };
  (script.runInThisContext() as (...args: unknown[]) => void)
    .call(moduleObject.exports, moduleObject.exports, requireFromFile, moduleObject, file, dirname(file));

  let saved = cacheAccepted;
  return {
    exports: moduleObject.exports,
    cacheAccepted,
    saveCodeCache() {
      if (saved) return;
      saved = true;
      writeCache(cachePath, sourceCrc, () => script.createCachedData());
    },
  };
}

function cacheFor(cachePath: string, sourceCrc: number): Buffer | undefined {
  let cache: Buffer;
  try {
    cache = readFileSync(cachePath);
  } catch {
    return undefined;
  }
  if (cache.length <= HEADER_BYTES || cache.readUInt32LE(0) !== sourceCrc) return undefined;
  const data = cache.subarray(HEADER_BYTES);
  return crc32(data) === cache.readUInt32LE(4) ? data : undefined;
}

/** `data` is asked for only once the file is open: serializing costs a few ms, for nothing where it cannot be written. */
function writeCache(cachePath: string, sourceCrc: number, data: () => Buffer): void {
  // Written aside and renamed: a start that reads it meanwhile sees the old file or the new one.
  const partial = `${cachePath}.${process.pid}.partial`;
  let fd: number;
  try {
    fd = openSync(partial, 'wx');
  } catch {
    return; // An installation the user cannot write to: each start compiles as Node's own cache allows.
  }
  try {
    const cached = data();
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(sourceCrc, 0);
    header.writeUInt32LE(crc32(cached), 4);
    writeFileSync(fd, Buffer.concat([header, cached]));
  } catch {
    closeSync(fd);
    rmSync(partial, { force: true });
    return;
  }
  closeSync(fd);
  try {
    renameSync(partial, cachePath);
  } catch {
    rmSync(partial, { force: true });
  }
}
