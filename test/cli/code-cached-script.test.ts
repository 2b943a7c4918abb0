// src/cli/code-cached-script.ts: `teaminfra mcp` runs its bundle with a V8 code cache taken once
// its start is done. Each start here is a child Node, as each start of the command is: a cache
// is only worth something to the next process.
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { inChildNode } from '../support/node-child.js';

const LOADER = fileURLToPath(new URL('../../dist/src/cli/code-cached-script.js', import.meta.url));

/** A CommonJS file of 300 functions that only `start()` calls, so V8 compiles them lazily, as a start of the bundle does. */
function bundleSource(answer: string): string {
  const functions = Array.from({ length: 300 }, (_, i) => `function step${i}(x) { return x + ${i} - ${i}; }`);
  const calls = Array.from({ length: 300 }, (_, i) => `x = step${i}(x);`);
  return [
    ...functions,
    `exports.start = function start() { let x = 1; ${calls.join(' ')} return x; };`,
    `exports.answer = () => ${JSON.stringify(answer)};`,
    `exports.shared = require('shared-thing');`,
  ].join('\n');
}

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The bundle, and beside it a copy of the built loader (which imports only Node's modules), so that another user can run both. */
function newBundle(answer = 'first'): string {
  dir = mkdtempSync(join(tmpdir(), 'teaminfra-code-cache-'));
  const file = join(dir, 'bundle.cjs');
  writeFileSync(file, bundleSource(answer), { mode: 0o644 });
  copyFileSync(LOADER, join(dir, 'loader.mjs'));
  chmodSync(join(dir, 'loader.mjs'), 0o644);
  return file;
}

interface Start { accepted: boolean; answer: string; sharedIsTheCallersOwn: boolean; started: number }

/** One process: runs the file, its start, then saves (before the start when `saveFirst`); as `uid` when given. */
function start(file: string, { saveFirst = false, uid }: { saveFirst?: boolean; uid?: number } = {}): Start {
  const script = `
    import { runCodeCached } from ${JSON.stringify(join(dirname(file), 'loader.mjs'))};
    const mine = { mine: true };
    const run = runCodeCached(${JSON.stringify(file)}, { 'shared-thing': mine });
    if (${saveFirst}) run.saveCodeCache();
    const started = run.exports.start();
    run.saveCodeCache();
    console.log(JSON.stringify({ accepted: run.cacheAccepted, answer: run.exports.answer(), sharedIsTheCallersOwn: run.exports.shared === mine, started }));
  `;
  return inChildNode(script, { cwd: dirname(file), uid }) as unknown as Start;
}

const cacheOf = (file: string) => `${file}.code-cache`;

describe('a script run with the code cache of its start', () => {
  it('runs without a cache the first time, writes one, and the next process takes it', () => {
    const file = newBundle();
    expect(start(file)).toEqual({ accepted: false, answer: 'first', sharedIsTheCallersOwn: true, started: 1 });
    expect(existsSync(cacheOf(file))).toBe(true);
    expect(start(file)).toEqual({ accepted: true, answer: 'first', sharedIsTheCallersOwn: true, started: 1 });
  });

  it('keeps the functions compiled during the start, which a cache taken before it lacks', () => {
    const before = newBundle();
    start(before, { saveFirst: true });
    const sizeBefore = statSync(cacheOf(before)).size;
    rmSync(dir, { recursive: true, force: true });
    const after = newBundle();
    start(after);
    // 300 functions' bytecode: well above what the top level alone takes.
    expect(statSync(cacheOf(after)).size).toBeGreaterThan(sizeBefore + 10_000);
  });

  it("refuses another build's cache of the same length, runs the new code and replaces the cache", () => {
    const file = newBundle('first');
    start(file);
    writeFileSync(file, bundleSource('other'));
    expect(start(file)).toMatchObject({ accepted: false, answer: 'other' });
    expect(start(file)).toMatchObject({ accepted: true, answer: 'other' });
  });

  // V8 does not check its data in a release build: given these bytes, it stops the process.
  it('runs the file when the cache is damaged or cut short, and writes a good one', () => {
    const file = newBundle();
    start(file);
    const cache = readFileSync(cacheOf(file));
    writeFileSync(cacheOf(file), Buffer.from(cache).fill(0x5a, 64, 512));
    expect(start(file)).toEqual({ accepted: false, answer: 'first', sharedIsTheCallersOwn: true, started: 1 });
    expect(start(file).accepted).toBe(true);
    writeFileSync(cacheOf(file), cache.subarray(0, cache.length >> 1));
    expect(start(file)).toEqual({ accepted: false, answer: 'first', sharedIsTheCallersOwn: true, started: 1 });
    expect(start(file).accepted).toBe(true);
  });

  it('runs, and leaves nothing half-written, when the cache cannot be written', () => {
    const file = newBundle();
    // A directory where the cache file would go: the rename fails, as on a read-only installation.
    mkdirSync(cacheOf(file));
    expect(start(file)).toEqual({ accepted: false, answer: 'first', sharedIsTheCallersOwn: true, started: 1 });
    expect(readdirSync(dir).sort()).toEqual(['bundle.cjs', 'bundle.cjs.code-cache', 'loader.mjs']);
  });

  it('runs, and writes nothing, in a directory the user cannot write to', () => {
    const file = newBundle();
    chmodSync(dir, 0o555);
    // root writes anywhere: then the start runs as nobody, for whom the directory is as read-only.
    const asRoot = process.getuid?.() === 0;
    expect(start(file, { uid: asRoot ? 65534 : undefined })).toEqual({ accepted: false, answer: 'first', sharedIsTheCallersOwn: true, started: 1 });
    expect(readdirSync(dir).sort()).toEqual(['bundle.cjs', 'loader.mjs']);
    chmodSync(dir, 0o755);
  });
});
