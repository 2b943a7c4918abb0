// scripts/pure-schema-builders.mjs, the rolldown plugin that lets `teaminfra mcp`'s bundle drop the
// SDK's protocol schemas it never uses. A bundle is made of small modules laid out as the SDK's
// (node_modules/@modelcontextprotocol/core/dist/...) over a stand-in zod that records what it
// builds, and run; then the plugin is run over the SDK's own files as installed.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';

interface PluginModule {
  pureSchemaBuilders(): object;
  markPureSchemaCalls(code: string): string;
  lazyRequireEdits(code: string): unknown[];
}
const plugin = (await import(pathToFileURL(join(packageRoot, 'scripts', 'pure-schema-builders.mjs')).href)) as PluginModule;

const dir = mkdtempSync(join(tmpdir(), 'teaminfra-pure-schemas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
}

// zod's part here: each builder records its name, so a run shows what was built and in which order.
write('node_modules/zod/package.json', JSON.stringify({ name: 'zod', type: 'module', exports: { './v4': './v4.mjs' } }));
write('node_modules/zod/v4.mjs', `
const schema = (name) => { globalThis.built.push(name); return { name, shape: { [name]: true }, extend: (more) => schema(name + '+') }; };
export const object = (shape) => schema('object:' + Object.keys(shape).join(','));
export const string = () => schema('string');
`);
write('node_modules/@modelcontextprotocol/core/package.json', JSON.stringify({ name: '@modelcontextprotocol/core', type: 'module' }));
write('node_modules/@modelcontextprotocol/core/dist/schemas.mjs', `import * as z from 'zod/v4';
export const BaseSchema = z.object({ base: z.string() });
export const UsedSchema = BaseSchema.extend({ used: z.string() });
export const OAuthSchema = z.object({ ...BaseSchema.shape, issuer: z.string() });
export const UnusedSchema = z.object({ unused: z.string() });
const SPEC_SCHEMA_KEYS = ['UsedSchema', 'OAuthSchema', 'UnusedSchema'];
const schemas_exports = { UsedSchema, OAuthSchema, UnusedSchema };
const _specTypeSchemas = {};
function register(key, schema) {
  _specTypeSchemas[key.slice(0, -6)] = schema;
}
for (const key of SPEC_SCHEMA_KEYS) register(key, schemas_exports[key]);
export const specTypeSchemas = Object.freeze(_specTypeSchemas);
`);

async function bundleAndRun(entry: string, name: string, plugins: object[]): Promise<{ code: string; built: string[]; value: unknown }> {
  const { rolldown } = await import('rolldown');
  write(`${name}.mjs`, entry);
  const bundle = await rolldown({ input: join(dir, `${name}.mjs`), platform: 'node', logLevel: 'silent', plugins: plugins as never[] });
  const { output } = await bundle.generate({ format: 'esm' });
  await bundle.close();
  const code = output[0].code;
  write(`${name}.out.mjs`, code);
  (globalThis as { built?: string[] }).built = [];
  const { value } = (await import(pathToFileURL(join(dir, `${name}.out.mjs`)).href)) as { value: unknown };
  return { code, built: (globalThis as unknown as { built: string[] }).built, value };
}

describe('the pure-schema-builders plugin', () => {
  it('drops the schemas nothing uses, and builds the used ones and what they are made of, in the order the module did', async () => {
    const entry = "import { UsedSchema } from '@modelcontextprotocol/core/dist/schemas.mjs';\nexport const value = UsedSchema.name;\n";
    const plain = await bundleAndRun(entry, 'used-plain', []);
    const shaken = await bundleAndRun(entry, 'used-shaken', [plugin.pureSchemaBuilders()]);
    expect(plain.built).toContain('object:unused');
    expect(shaken.built).toEqual(['string', 'object:base', 'string', 'object:base+']);
    expect(shaken.code).not.toContain('issuer');
    expect(shaken.code).not.toContain('unused');
    expect(shaken.value).toBe(plain.value);
  });

  it('keeps the registry of every spec type, filled, when the bundle reads it', async () => {
    const entry = "import { specTypeSchemas } from '@modelcontextprotocol/core/dist/schemas.mjs';\nexport const value = Object.keys(specTypeSchemas).join();\n";
    const plain = await bundleAndRun(entry, 'registry-plain', []);
    const shaken = await bundleAndRun(entry, 'registry-shaken', [plugin.pureSchemaBuilders()]);
    expect(shaken.value).toBe('Used,OAuth,Unused');
    expect(shaken.built).toEqual(plain.built);
  });

  it('leaves out the registry and every schema only it reads when the bundle does not read it', async () => {
    const shaken = await bundleAndRun("import '@modelcontextprotocol/core/dist/schemas.mjs';\nexport const value = 1;\n", 'nothing', [plugin.pureSchemaBuilders()]);
    expect(shaken.built).toEqual([]);
  });
});

// The server's way of bundling a CommonJS package (ajv): a wrapper that runs the module on its first require.
write('node_modules/@modelcontextprotocol/server/package.json', JSON.stringify({ name: '@modelcontextprotocol/server', type: 'module' }));
const validatorModule = (use: string) => `
const __commonJSMin = (cb, mod) => () => (mod || cb((mod = { exports: {} }).exports, mod), mod.exports);
var require_engine = /* @__PURE__ */ __commonJSMin(((exports) => {
  globalThis.built.push('engine module');
  exports.make = () => 'an engine';
  exports.helper = 'a helper';
}));
var import_engine = require_engine();
const helper = import_engine.helper;
export class Validator {
  get engine() { return ${use}; }
}
export { helper };
`;
write('node_modules/@modelcontextprotocol/server/dist/validator.mjs', validatorModule('import_engine.make()'));
write('node_modules/@modelcontextprotocol/server/dist/validator-shorthand.mjs', validatorModule('({ import_engine }).import_engine.make()'));

describe('the plugin and the CommonJS modules the SDK requires at its top level', () => {
  const entry = (file: string, read: string) =>
    `import { Validator, helper } from '@modelcontextprotocol/server/dist/${file}';\nconst before = [...globalThis.built];\n` +
    `export const value = { before, ${read}, after: globalThis.built };\n`;

  it('loads such a module on its first use, not when the bundle loads', async () => {
    const { value, code } = await bundleAndRun(entry('validator.mjs', 'engine: new Validator().engine'), 'lazy-require', [plugin.pureSchemaBuilders()]);
    expect(value).toEqual({ before: [], engine: 'an engine', after: ['engine module'] });
    // Its function no longer in parentheses, which V8 would compile with the bundle's top level.
    expect(code).toContain('__commonJSMin((exports) => {');
    expect(code).not.toContain('__commonJSMin(((');
  });

  it('still loads it with the bundle when the bundle uses a constant read from it', async () => {
    const { value } = await bundleAndRun(entry('validator.mjs', 'helper'), 'lazy-require-constant', [plugin.pureSchemaBuilders()]);
    expect(value).toEqual({ before: ['engine module'], helper: 'a helper', after: ['engine module'] });
  });

  it('leaves the module as it was when it uses the name in a way it does not rewrite', async () => {
    const { value } = await bundleAndRun(entry('validator-shorthand.mjs', 'engine: new Validator().engine'), 'lazy-require-unsafe', [plugin.pureSchemaBuilders()]);
    expect(value).toEqual({ before: ['engine module'], engine: 'an engine', after: ['engine module'] });
  });
});

// The server's way of building an era's wire schemas: all in one function, on the first validation.
const eraModule = (inner: string) => `import * as z from 'zod/v4';
function build() {
  const BaseSchema = z.object({ base: z.string() });
  const PingSchema = BaseSchema.extend({ ping: z.string() });
  const OtherSchema = z.object({ other: z.string() });
  function pingOf() { return ${inner}; }
  return { BaseSchema, PingSchema: PingSchema, OtherSchema, Ping: pingOf(), nested: { other: OtherSchema } };
}
let memo;
function buildSchemas2025() { return memo ??= build(); }
let maps;
function registryMaps() {
  if (maps) return maps;
  const s = buildSchemas2025();
  maps = { requestSchemas: { ping: s.PingSchema, other: s.OtherSchema } };
  return maps;
}
export const ping = () => registryMaps().requestSchemas.ping;
export const all = () => buildSchemas2025();
`;
write('node_modules/@modelcontextprotocol/server/dist/era.mjs', eraModule('PingSchema'));
write('node_modules/@modelcontextprotocol/server/dist/era-shadowed.mjs', eraModule('[PingSchema].map((PingSchema) => PingSchema)[0]'));

describe("the plugin and an era's wire schemas", () => {
  const entry = (file: string) => `import { ping, all } from '@modelcontextprotocol/server/dist/${file}';
const name = ping().name;
const afterPing = [...globalThis.built];
const schemas = all();
export const value = { name, afterPing, same: ping() === schemas.PingSchema && schemas.Ping === schemas.PingSchema,
  nested: schemas.nested.other === schemas.OtherSchema, other: schemas.OtherSchema.name, after: globalThis.built };
`;

  it('builds a schema, and what it is made of, on its first use, once', async () => {
    const plain = await bundleAndRun(entry('era.mjs'), 'era-plain', []);
    const lazy = await bundleAndRun(entry('era.mjs'), 'era-lazy', [plugin.pureSchemaBuilders()]);
    expect(plain.value).toMatchObject({ afterPing: ['string', 'object:base', 'string', 'object:base+', 'string', 'object:other'] });
    expect(lazy.value).toEqual({
      name: 'object:base+', afterPing: ['string', 'object:base', 'string', 'object:base+'], same: true, nested: true,
      other: 'object:other', after: ['string', 'object:base', 'string', 'object:base+', 'string', 'object:other'],
    });
  });

  it('leaves the function as it was when a name is declared again inside it', async () => {
    const shadowed = await bundleAndRun(entry('era-shadowed.mjs'), 'era-shadowed', [plugin.pureSchemaBuilders()]);
    expect(shadowed.code).not.toContain('$memo');
    expect(shadowed.value).toMatchObject({ afterPing: ['string', 'object:base', 'string', 'object:base+', 'string', 'object:other'], same: true });
  });
});

describe('the plugin over the SDK as installed', () => {
  const sdkFiles = (pkg: string) => readdirSync(join(packageRoot, 'node_modules', '@modelcontextprotocol', pkg, 'dist'))
    .filter((file) => file.endsWith('.mjs')).map((file) => readFileSync(join(packageRoot, 'node_modules', '@modelcontextprotocol', pkg, 'dist', file), 'utf8'));

  it("marks every top-level zod schema of @modelcontextprotocol/core as pure (if this fails after an SDK update, the plugin no longer recognizes the SDK's schemas)", () => {
    const sources = sdkFiles('core').filter((code) => code.includes('import * as z from "zod/v4"'));
    const built = sources.reduce((count, code) => count + (code.match(/^(export )?const \w+ = z\./gm) ?? []).length, 0);
    const marked = sources.map((code) => plugin.markPureSchemaCalls(code));
    const count = (pattern: RegExp) => marked.reduce((total, code) => total + (code.match(pattern) ?? []).length, 0);
    expect(built).toBeGreaterThan(50);
    expect(count(/^(export )?const \w+ = \/\* @__PURE__ \*\/ \(\(\) => z\./gm)).toBe(built);
    // And those built from them (`RequestSchema.extend(...)`), which are about as many.
    expect(count(/^(export )?const \w+ = \/\* @__PURE__ \*\/ \(\(\) => \w+Schema\./gm)).toBeGreaterThan(50);
  });

  it("has ajv load on the validator's first use (if this fails after an SDK update, ajv loads at every start again)", () => {
    const withAjv = sdkFiles('server').filter((code) => /^var import_ajv = require_ajv\(\);$/m.test(code));
    expect(withAjv).toHaveLength(1);
    const marked = plugin.markPureSchemaCalls(withAjv[0]!);
    expect(marked).not.toMatch(/^var import_\w+ = (\/\* @__PURE__ \*\/ )?(__toESM\()?require_\w+\(/m);
    expect(marked).toContain('function import_ajv$() {\nreturn require_ajv();\n}');
    // And compile each of ajv's modules on its first require, not with the bundle's top level.
    expect(marked).not.toContain('__commonJSMin(((');
    expect(marked.match(/__commonJSMin\(\(exports|__commonJSMin\(\(\(?exports, module/g)?.length).toBeGreaterThan(90);
  });

  it("builds each era's wire schemas one by one, on first use (if this fails after an SDK update, the first request builds them all again)", () => {
    const withEras = sdkFiles('server').filter((code) => code.includes('function buildSchemas2025()'));
    expect(withEras).toHaveLength(1);
    const marked = plugin.markPureSchemaCalls(withEras[0]!);
    for (const build of ['build$1', 'build']) {
      const body = marked.slice(marked.indexOf(`function ${build}() {`));
      expect(body.slice(0, body.indexOf('\n}\n')).match(/\$memo \?\?= /g)?.length, build).toBeGreaterThan(100);
    }
    expect(marked).toMatch(/function registryMaps\(\) \{[^]*get initialize\(\) \{ return s\.InitializeRequestSchema; \}/);
  });

  it("moves the server's registry of every spec type into a function its constants call (if this fails after an SDK update, the registry keeps every schema in the bundle)", () => {
    const withRegistry = sdkFiles('server').filter((code) => code.includes('const specTypeSchemas = Object.freeze('));
    expect(withRegistry).toHaveLength(1);
    const marked = plugin.markPureSchemaCalls(withRegistry[0]!);
    expect(marked).toContain('const specTypeSchemas = /* @__PURE__ */ (() => (__fillSdkRegistry(), Object.freeze(');
    expect(marked).toMatch(/function __fillSdkRegistry\(\) \{\nif \(__fillSdkRegistryDone\) return;\n__fillSdkRegistryDone = true;\nfor \(const key of SPEC_SCHEMA_KEYS\)/);
  });
});
