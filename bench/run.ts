// `npm run bench`: runs every dist/bench/*.bench.js in name order. Each module's default export
// is an async function that prints its own report and returns its figures. A module that fails
// is reported and the others still run. The figures of the whole run go to
// dist/bench-results.json (never into the source tree).
// Optional arguments filter modules by name: `node dist/bench/run.js list-services`.
// A module that runs longer than BENCH_MODULE_TIMEOUT_SECONDS (default 300) counts as failed.
import { readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Outcome { module: string; ok: boolean; seconds: number; figures?: unknown; error?: string }

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const modules = readdirSync(here)
  .filter((file) => file.endsWith('.bench.js'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();

const outcomes: Outcome[] = [];
const timeoutSeconds = Number(process.env.BENCH_MODULE_TIMEOUT_SECONDS) || 300;

function withTimeout<T>(promise: Promise<T>, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
const machine = { node: process.version, platform: `${process.platform} ${process.arch}`, cpus: cpus().length, cpu: cpus()[0]?.model };
console.log(`teaminfra benchmarks: ${modules.length} module(s) on Node ${machine.node}, ${machine.cpus} CPU(s)`);

for (const file of modules) {
  const name = file.replace(/\.bench\.js$/, '');
  console.log(`\n=== ${name} ===`);
  const started = performance.now();
  try {
    const loaded = (await import(pathToFileURL(join(here, file)).href)) as { default?: unknown };
    if (typeof loaded.default !== 'function') throw new Error(`${file} has no default export function`);
    const figures = await withTimeout((loaded.default as () => Promise<unknown>)(), timeoutSeconds);
    outcomes.push({ module: name, ok: true, seconds: (performance.now() - started) / 1000, figures });
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    console.error(`${name} failed: ${message}`);
    outcomes.push({ module: name, ok: false, seconds: (performance.now() - started) / 1000, error: message });
  }
}

const resultsFile = join(here, '..', 'bench-results.json');
writeFileSync(resultsFile, JSON.stringify({ at: new Date().toISOString(), machine, results: outcomes }, null, 2) + '\n');

console.log('\n=== summary ===');
for (const outcome of outcomes) {
  console.log(`${outcome.ok ? 'ok    ' : 'FAILED'} ${outcome.module.padEnd(28)} ${outcome.seconds.toFixed(1).padStart(6)} s` +
    (outcome.ok ? `  ${headline(outcome.figures)}` : `  ${outcome.error?.split('\n')[0]}`));
}
console.log(`figures written to ${resultsFile}`);
// Exit explicitly: a module that timed out may still hold handles (its servers stop with us).
process.exit(outcomes.some((outcome) => !outcome.ok) ? 1 : 0);

/** A one-line digest: ratios and target when a module reports them, else its top-level numbers. */
function headline(figures: unknown): string {
  if (typeof figures !== 'object' || figures === null) return '';
  const record = figures as Record<string, unknown>;
  const parts: string[] = [];
  for (const source of [record.ratios, record]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [key, value] of Object.entries(source)) {
      if (typeof value === 'number') parts.push(`${key}=${Number.isInteger(value) ? value : value.toFixed(2)}`);
    }
  }
  const target = record.target as { met?: unknown } | undefined;
  if (target && typeof target.met === 'boolean') parts.push(`target ${target.met ? 'met' : 'NOT met'}`);
  return parts.join('  ');
}
