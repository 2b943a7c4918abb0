// Build step after tsc (npm run build, prepare, pretest, bench): `teaminfra mcp` as one file,
// dist/mcp/teaminfra-mcp.cjs, which src/cli/main.ts runs when it is not older than the compiled
// code. An assistant starts `teaminfra mcp` for each conversation and waits for its tools/list;
// Node links an ES module graph file by file, and the command's graph is about 250 files (our
// dist, Kysely, zod and the MCP SDK): one file answers in about half the time (docs/benchmarks.md,
// "stdio"). It is CommonJS because a CommonJS file can run with a V8 code cache taken once its
// start is done (src/cli/code-cached-script.ts), and an ES module cannot.
// What is bundled: our modules the command can reach, and the JavaScript packages it loads at
// start (better-sqlite3's JavaScript too, not its addon or the loader that finds it). What our code imports lazily (import(), e.g. the engine's client for a service's logs)
// becomes a chunk beside it, loaded by the first call that needs it: the same module instances as
// the rest (one AppError class, one Kysely), which a second copy under dist/src would not be.
// Every other package, native addons among them, is imported from node_modules as before, and
// so are the compiled modules that src/cli/main.ts itself loads (SHARED_WITH_MAIN): main.ts checks
// `instanceof UsageError` on what the command throws, which needs the one class both load. The
// bundle requires them by their path from it, and src/cli/mcp-module.ts hands it main's instances.
// The SDK's protocol schemas that nothing in the command uses are left out (pure-schema-builders.mjs):
// @modelcontextprotocol/core builds every one of them, OAuth's included, when it loads; and ajv,
// which the server requires when it loads, is loaded on its validator's first use.
import { rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rolldown } from 'rolldown';
import { pureSchemaBuilders } from './pure-schema-builders.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const outDir = join(dist, 'mcp');
/** Packages inlined: JavaScript loaded at start, many files each (better-sqlite3's 15 files of it, without its addon). */
const INLINED = /^(kysely|zod|@modelcontextprotocol\/(server|core)|better-sqlite3)(\/|$)/;
/**
 * better-sqlite3's loader finds its native addon from its own directory (`__dirname`), so it is
 * not inlined: the bundle requires it from where the package is installed.
 */
const SQLITE_BINDING = /[\\/]node_modules[\\/]better-sqlite3[\\/]lib[\\/]binding\.js$/;
/** Kysely's values through src/db/kysely-runtime.ts, which requires its CommonJS build at run time: here, its ES build, inlined. */
const KYSELY_RUNTIME = join(dist, 'src', 'db', 'kysely-runtime.js');
/** Replaced by the tools/list entries computed now, from the same compiled catalog (src/mcp/prebuilt-tools.ts). */
const PREBUILT_TOOLS = join(dist, 'src', 'mcp', 'prebuilt-tools.js');
// Those main's instances are handed in for (src/cli/mcp-module.ts, by the specifier the bundle
// requires them with from dist/mcp): the one list of them.
const { SHARED_WITH_BUNDLE } = await import(pathToFileURL(join(dist, 'src', 'cli', 'mcp-module.js')).href);
const SHARED_WITH_MAIN = Object.keys(SHARED_WITH_BUNDLE).map((specifier) => resolve(outDir, specifier));

const { buildToolCatalog } = await import(pathToFileURL(join(dist, 'src', 'mcp', 'tool-definitions.js')).href);
const { catalog } = await import(pathToFileURL(join(dist, 'tools', 'index.js')).href);
const prebuilt = buildToolCatalog(catalog).definitions
  .map((definition) => ({ name: definition.capability.name, tool: definition.tool, legacyTool: definition.legacyTool }));

const bundle = await rolldown({
  input: { 'teaminfra-mcp': join(dist, 'src', 'cli', 'mcp.js') },
  platform: 'node',
  logLevel: 'warn',
  external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0') && !INLINED.test(id),
  plugins: [pureSchemaBuilders(), {
    name: 'teaminfra-mcp',
    resolveId(source, importer) {
      if (!importer || !source.startsWith('.')) return null;
      const id = resolve(dirname(importer), source);
      return SHARED_WITH_MAIN.includes(id) ? { id, external: true } : null;
    },
    load(id) {
      if (SQLITE_BINDING.test(id)) {
        return [
          "import { createRequire } from 'node:module';",
          "import { dirname, join } from 'node:path';",
          'const require = createRequire(import.meta.url);',
          "export const { getBinding } = require(join(dirname(require.resolve('better-sqlite3')), 'binding.js'));",
        ].join('\n');
      }
      // JSON.parse of a string: V8 reads it faster than the same object literal.
      if (id === PREBUILT_TOOLS) return `export const PREBUILT_TOOLS = JSON.parse(${JSON.stringify(JSON.stringify(prebuilt))});`;
      if (id === KYSELY_RUNTIME) return "export { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, SqliteQueryCompiler, sql } from 'kysely';";
      return null;
    },
  }],
});
rmSync(outDir, { recursive: true, force: true });
await bundle.write({
  dir: outDir,
  format: 'cjs',
  entryFileNames: '[name].cjs',
  chunkFileNames: 'teaminfra-mcp-[name]-[hash].cjs',
  sourcemap: true,
  // The compiled modules left outside, by their path from the bundle.
  paths: (id) => (id.startsWith(dist) ? relative(outDir, id).split(sep).join('/') : id),
});
await bundle.close();
