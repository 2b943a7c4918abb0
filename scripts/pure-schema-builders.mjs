// A rolldown plugin for bundling the MCP SDK (scripts/bundle-mcp.mjs, and the SDK floor the bench
// bundles the same way): marks the zod schemas the SDK builds at the top level of its modules as
// pure, so the bundle keeps only the ones something it runs can reach.
// @modelcontextprotocol/core defines every protocol schema of the spec as a module constant
// (`const ToolSchema = z.object({...})`, OAuth's and OpenID's among them), and building them is
// most of what loading the SDK costs (src/mcp/README.md, "Stdio start"). zod's builders are
// free of side effects on anything but the object they return, but rolldown cannot know that, so
// without a hint it keeps and runs every one. With `/* @__PURE__ */` on the calls that build a
// constant, an unused constant is dropped with its calls; one the SDK uses (its validation of a
// request, its registry) is kept with everything it is built from, as before.
// Only constants whose value is a chain of calls rooted in zod's namespace (`z.object(...)`) or
// in another such constant (`RequestSchema.extend(...)`) are marked; calls inside functions
// (a refine's or transform's body) are never touched, as they run only when that schema parses.
// It also has the server load ajv, which it bundles as CommonJS, on the first use of its JSON
// Schema validator rather than when it loads (lazyRequireEdits below), and compile it then
// (unparenthesizedWrapperEdits); and it has each era's wire schemas, which the server builds all
// at once on the first request, built one by one as they are first used (lazyEraSchemaEdits).
import { parseAst } from 'rolldown/parseAst';

/** The SDK's built files: its schemas live in core's chunks and in the server's copy of core-internal. */
const SDK_FILE = /[\\/]node_modules[\\/]@modelcontextprotocol[\\/](core|server)[\\/]dist[\\/][^\\/]+\.mjs$/;

/** The identifier a chain of calls and member reads starts from (`z` in `z.object({}).extend({})`), if any. */
function rootOf(node) {
  let current = node;
  for (;;) {
    if (current.type === 'CallExpression') current = current.callee;
    else if (current.type === 'MemberExpression') current = current.object;
    else if (current.type === 'ParenthesizedExpression') current = current.expression;
    else return current.type === 'Identifier' ? current.name : undefined;
  }
}

/** The module's top-level `const` declarators, exported or not. */
function* topLevelDeclarators(program) {
  for (const statement of program.body) {
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type === 'VariableDeclaration' && declaration.kind === 'const') yield* declaration.declarations;
  }
}

/** `import * as z from 'zod/v4'` (or 'zod'): the local names zod's namespace is bound to. */
function zodNamespaces(program) {
  const names = new Set();
  for (const statement of program.body) {
    if (statement.type !== 'ImportDeclaration' || !/^zod(\/v4)?$/.test(statement.source.value)) continue;
    for (const specifier of statement.specifiers) if (specifier.type === 'ImportNamespaceSpecifier') names.add(specifier.local.name);
  }
  return names;
}

/**
 * Edits that make every zod-built constant's value a pure call: `const X = z.object({...})`
 * becomes `const X = /* @__PURE__ *\/ (() => z.object({...}))()`, built at the same point of the
 * load as before. The whole value goes in the function, not only its outer call: a pure call's
 * arguments are still kept when they may have effects, and reading a property (`...Other.shape`)
 * counts as one.
 */
export function pureSchemaEdits(code, program = parseAst(code, { sourceType: 'module' })) {
  const schemaRoots = zodNamespaces(program);
  if (schemaRoots.size === 0) return [];
  const edits = [];
  for (const declarator of topLevelDeclarators(program)) {
    const init = declarator.init;
    if (declarator.id.type !== 'Identifier' || !init || (init.type !== 'CallExpression' && init.type !== 'MemberExpression')) continue;
    const root = rootOf(init);
    if (root === undefined || !schemaRoots.has(root)) continue;
    // Later constants built from this one (`ResultSchema.extend(...)`) are zod-built too.
    schemaRoots.add(declarator.id.name);
    edits.push({ start: init.start, end: init.start, text: '/* @__PURE__ */ (() => ' }, { start: init.end, end: init.end, text: ')()' });
  }
  return edits;
}

/**
 * The SDK's public registry of every spec type (`specTypeSchemas`, `isSpecType`) is filled by
 * top-level loops (`for (const key of SPEC_SCHEMA_KEYS) register(key, schemas_exports[key])`),
 * which read every schema constant and which a bundler must keep, as they write into objects.
 * Nothing the SDK runs reads that registry; it is API for an application to validate spec types
 * itself. The loops move into a function called, once and at the same point of the module's
 * load, by the constants that expose the registry, which are marked pure: the registry and what
 * only it reads go when the bundle does not use it, and stay, filled in the same order, when it does.
 * Returns the edits ({ start, end, text }) or none when the module has no such loop.
 */
export function registryEdits(code, program = parseAst(code, { sourceType: 'module' })) {
  const functions = new Map(program.body.filter((s) => s.type === 'FunctionDeclaration').map((s) => [s.id.name, s]));
  const loops = program.body.filter((statement) => /^For(Of|In)?Statement$/.test(statement.type)
    && statement.body.type === 'ExpressionStatement' && statement.body.expression.type === 'CallExpression'
    && statement.body.expression.callee.type === 'Identifier' && functions.has(statement.body.expression.callee.name));
  // Only loops that follow each other move into the function, so nothing else changes its place.
  const adjacent = loops.every((loop, index) => index === 0 || program.body.indexOf(loop) === program.body.indexOf(loops[index - 1]) + 1);
  if (loops.length === 0 || !adjacent) return [];
  // The objects the registering functions write into (`_specTypeSchemas[name] = schema`).
  const filled = new Set();
  for (const loop of loops) {
    const register = functions.get(loop.body.expression.callee.name);
    for (const statement of register.body.body) {
      const assigned = statement.type === 'ExpressionStatement' && statement.expression.type === 'AssignmentExpression' ? statement.expression.left : undefined;
      if (assigned?.type === 'MemberExpression' && assigned.object.type === 'Identifier') filled.add(assigned.object.name);
    }
  }
  const exposers = [...topLevelDeclarators(program)].filter(({ init }) => init?.type === 'CallExpression'
    && init.arguments.length === 1 && init.arguments[0].type === 'Identifier' && filled.has(init.arguments[0].name)
    && init.callee.type === 'MemberExpression' && init.callee.object.type === 'Identifier' && init.callee.object.name === 'Object');
  if (exposers.length === 0) return [];
  // The loops become a function run once, by whichever exposing constant is built first.
  const fill = '__fillSdkRegistry';
  const edits = [{ start: loops[0].start, end: loops[0].start, text: `let ${fill}Done = false;\nfunction ${fill}() {\nif (${fill}Done) return;\n${fill}Done = true;\n` }];
  edits.push({ start: loops.at(-1).end, end: loops.at(-1).end, text: '\n}' });
  for (const { init } of exposers) {
    edits.push({ start: init.start, end: init.start, text: `/* @__PURE__ */ (() => (${fill}(), ` }, { start: init.end, end: init.end, text: '))()' });
  }
  return edits;
}

/**
 * The SDK's server bundles ajv as CommonJS modules behind wrappers that run a module on its first
 * `require_x()` (`var require_ajv = __commonJSMin(...)`), and requires them at its top level
 * (`var import_ajv = require_ajv()`) for a JSON Schema validator it only builds on its first use:
 * loading ajv costs every start 2 to 3 ms for a validator a server may never build. Here each such
 * top-level require becomes a function (`import_ajv$()`) called where its value is read, so ajv
 * loads on the validator's first use; a constant read from one (`const addFormats =
 * import_dist.default`) likewise, and kept as a constant, built where it was, only when the bundle
 * uses it as one (an export). Nothing is changed when a name is used in a way not rewritten here
 * (declared again in a function, a shorthand property): the module then loads ajv as before.
 */
export function lazyRequireEdits(code, program = parseAst(code, { sourceType: 'module' })) {
  const wrappers = new Set();
  const lazy = new Map(); // name -> { statement, text }: the expression its value comes from
  const derived = new Map(); // name -> { statement, base, property }
  for (const statement of program.body) {
    if (statement.type !== 'VariableDeclaration' || statement.declarations.length !== 1) continue;
    const [{ id, init }] = statement.declarations;
    if (id.type !== 'Identifier' || !init) continue;
    if (init.type === 'CallExpression' && init.callee.type === 'Identifier' && init.callee.name === '__commonJSMin') wrappers.add(id.name);
    else if (isRequireCall(init, wrappers)) lazy.set(id.name, { statement, text: code.slice(init.start, init.end) });
    else if (init.type === 'MemberExpression' && !init.computed && init.object.type === 'Identifier' && lazy.has(init.object.name)) {
      derived.set(id.name, { statement, base: init.object.name, property: init.property.name });
    }
  }
  if (lazy.size === 0) return [];
  const names = new Set([...lazy.keys(), ...derived.keys()]);
  const exported = new Set(program.body.filter((s) => s.type === 'ExportNamedDeclaration' && !s.declaration)
    .flatMap((s) => s.specifiers.map((specifier) => specifier.local.name)));
  const edits = [];
  let unsafe = false;
  for (const statement of program.body) {
    if (statement.type === 'ExportNamedDeclaration' && !statement.declaration) continue;
    if ([...lazy.values(), ...derived.values()].some((entry) => entry.statement === statement)) continue;
    // A wrapped CommonJS module has its own scope, where these names may mean something else.
    if (statement.type === 'VariableDeclaration' && statement.declarations.some((d) => d.id.type === 'Identifier' && wrappers.has(d.id.name))) continue;
    walk(statement, null, (node, parent) => {
      if (node.type !== 'Identifier' || !names.has(node.name)) return;
      const read = (parent?.type === 'MemberExpression' && parent.object === node)
        || (parent?.type === 'CallExpression' && (parent.callee === node || parent.arguments.includes(node)));
      if (read) edits.push({ start: node.start, end: node.end, text: `${node.name}$()` });
      else if (!(parent?.type === 'MemberExpression' && parent.property === node && !parent.computed)
        && !(parent?.type === 'Property' && parent.key === node && !parent.computed && !parent.shorthand)) unsafe = true;
    });
  }
  if (unsafe) return [];
  for (const [name, { statement, text }] of lazy) {
    edits.push({ start: statement.start, end: statement.end, text: `function ${name}$() {\nreturn ${text};\n}` });
  }
  for (const [name, { statement, base, property }] of derived) {
    const constant = exported.has(name) ? `\nconst ${name} = /* @__PURE__ */ (() => ${name}$())();` : '';
    edits.push({ start: statement.start, end: statement.end, text: `function ${name}$() {\nreturn ${base}$().${property};\n}${constant}` });
  }
  return edits;
}

/**
 * The SDK's build writes each of those wrappers' module function in parentheses
 * (`__commonJSMin(((exports) => {...}))`), and V8 compiles a function written in parentheses
 * when it compiles the code around it, on the guess that it is called at once. So every start
 * compiled all of ajv's 100 modules, run or not (176 KB of the 745 KB of code V8 kept for the
 * bundle). Without the parentheses each module is compiled on its first require, like any
 * function. Needs a program parsed with `preserveParens`.
 */
export function unparenthesizedWrapperEdits(program) {
  const edits = [];
  walk(program, null, (node) => {
    if (node.type !== 'CallExpression' || node.callee.type !== 'Identifier' || node.callee.name !== '__commonJSMin') return;
    const [module] = node.arguments;
    if (module?.type !== 'ParenthesizedExpression' || !/FunctionExpression$/.test(module.expression.type)) return;
    edits.push({ start: module.start, end: module.start + 1, text: '' }, { start: module.end - 1, end: module.end, text: '' });
  });
  return edits;
}

/**
 * The SDK builds each era's wire schemas in one function (`function build() { const A = z...;
 * ...; return { A, ... }; }`), on the first validation of a request, and its registry of them
 * (`registryMaps`) reads every one: the first request of a start built all 150 of the 2025-era
 * schemas, where initialize and tools/list need a few. Here each constant becomes a function
 * that builds it on its first call (`const A = () => A$memo ??= (z...)`), each reference to it
 * a call, and the returned object and the registry's maps getters that read them: the same
 * schemas, each built once, on first use. A function of another shape is left as it is.
 */
export function lazyEraSchemaEdits(code, program) {
  const edits = [];
  for (const fn of program.body) {
    if (fn.type === 'FunctionDeclaration' && /^build(\$\d+)?$/.test(fn.id?.name ?? '')) edits.push(...lazyBuildEdits(code, fn));
    else if (fn.type === 'FunctionDeclaration') edits.push(...lazyRegistryEdits(code, fn));
  }
  return edits;
}

function lazyBuildEdits(code, fn) {
  const body = fn.body.body;
  const last = body.at(-1);
  if (last?.type !== 'ReturnStatement' || last.argument?.type !== 'ObjectExpression') return [];
  const constants = body.filter((statement) => statement.type === 'VariableDeclaration');
  const shaped = body.every((statement) => statement === last || statement.type === 'FunctionDeclaration'
    || (statement.type === 'VariableDeclaration' && statement.kind === 'const' && statement.declarations.length === 1
      && statement.declarations[0].id.type === 'Identifier' && statement.declarations[0].init));
  if (!shaped || constants.length === 0) return [];
  const names = new Set(constants.map((statement) => statement.declarations[0].id.name));
  const declared = new Set(constants.map((statement) => statement.declarations[0].id));
  const edits = new Map(); // start -> edit
  let unsafe = false;
  walk(fn.body, null, (node, parent) => {
    // A name declared again inside (a parameter, a variable) would mean something else there.
    if (/Function/.test(node.type) && node.params.some((param) => param.type !== 'Identifier' || names.has(param.name))) unsafe = true;
    if (node.type === 'VariableDeclarator' && !declared.has(node.id) && (node.id.type !== 'Identifier' || names.has(node.id.name))) unsafe = true;
    if (node.type !== 'Identifier' || !names.has(node.name) || declared.has(node) || edits.has(node.start)) return;
    if (parent?.type === 'MemberExpression' && parent.property === node && !parent.computed) return;
    if (parent?.type === 'Property' && parent.shorthand) {
      edits.set(node.start, { start: parent.start, end: parent.end, text: `${node.name}: ${node.name}()` });
      return;
    }
    if (parent?.type === 'Property' && parent.key === node && !parent.computed) return;
    edits.set(node.start, { start: node.start, end: node.end, text: `${node.name}()` });
  });
  if (unsafe) return [];
  for (const statement of constants) {
    const [{ id, init }] = statement.declarations;
    edits.set(statement.start, { start: statement.start, end: init.start, text: `let ${id.name}$memo;\nconst ${id.name} = () => ${id.name}$memo ??= (` });
    edits.set(init.end, { start: init.end, end: init.end, text: ')' });
  }
  const memos = [];
  const getters = (object) => {
    for (const property of object.properties) {
      if (property.type !== 'Property' || property.computed || property.kind !== 'init' || property.method) { unsafe = true; continue; }
      const key = code.slice(property.key.start, property.key.end);
      const value = property.value;
      if (value.type === 'Identifier' && names.has(value.name)) {
        edits.delete(value.start);
        edits.set(property.start, { start: property.start, end: property.end, text: `get ${key}() { return ${value.name}(); }` });
      } else if (value.type === 'ObjectExpression') {
        getters(value);
      } else {
        const memo = `built$${memos.length}`;
        memos.push(memo);
        edits.set(property.start, { start: property.start, end: value.start, text: `get ${key}() { return ${memo} ??= (` });
        edits.set(value.end, { start: value.end, end: value.end, text: '); }' });
      }
    }
  };
  getters(last.argument);
  if (unsafe) return [];
  if (memos.length > 0) edits.set(last.start, { start: last.start, end: last.start, text: `let ${memos.join(', ')};\n` });
  return [...edits.values()];
}

/**
 * A registry over an era's schemas (`const s = buildSchemas2025(); maps = { requestSchemas: {
 * ping: s.PingRequestSchema, ... } }`): each entry that reads a schema becomes a getter.
 */
function lazyRegistryEdits(code, fn) {
  const schemas = new Set();
  const edits = [];
  walk(fn.body, null, (node) => {
    if (node.type === 'VariableDeclarator' && node.id.type === 'Identifier' && node.init?.type === 'CallExpression'
      && node.init.callee.type === 'Identifier' && /^buildSchemas\d+$/.test(node.init.callee.name)) schemas.add(node.id.name);
  });
  if (schemas.size === 0) return [];
  walk(fn.body, null, (node, parent) => {
    if (node.type !== 'Property' || parent?.type !== 'ObjectExpression' || node.computed || node.kind !== 'init' || node.shorthand) return;
    const value = node.value;
    if (value.type !== 'MemberExpression' || value.computed || value.object.type !== 'Identifier' || !schemas.has(value.object.name)) return;
    edits.push({ start: node.start, end: node.end, text: `get ${code.slice(node.key.start, node.key.end)}() { return ${code.slice(value.start, value.end)}; }` });
  });
  return edits;
}

function isRequireCall(node, wrappers) {
  if (node.type !== 'CallExpression' || node.callee.type !== 'Identifier') return false;
  if (wrappers.has(node.callee.name)) return node.arguments.length === 0;
  return node.callee.name === '__toESM' && node.arguments.length >= 1 && isRequireCall(node.arguments[0], wrappers);
}

/** Calls `visit(node, parent)` for every node under `node`. */
function walk(node, parent, visit) {
  if (!node || typeof node.type !== 'string') return;
  visit(node, parent);
  for (const key of Object.keys(node)) {
    if (key === 'type' || key === 'start' || key === 'end') continue;
    const value = node[key];
    if (Array.isArray(value)) for (const item of value) walk(item, node, visit);
    else if (value && typeof value === 'object' && typeof value.type === 'string') walk(value, node, visit);
  }
}

/** Applies `edits` ({ start, end, text }, not overlapping) to `code`. */
function applyEdits(code, edits) {
  let out = '';
  let from = 0;
  for (const { start, end, text } of [...edits].sort((a, b) => a.start - b.start || a.end - b.end)) {
    out += code.slice(from, start) + text;
    from = end;
  }
  return out + code.slice(from);
}

/**
 * The module with its zod-built constants marked pure, its spec-type registry built only when
 * read, ajv loaded and compiled on first use, and its era wire schemas built one by one.
 */
export function markPureSchemaCalls(code) {
  const program = parseAst(code, { sourceType: 'module' });
  const edits = [
    ...pureSchemaEdits(code, program), ...registryEdits(code, program), ...lazyRequireEdits(code, program),
    ...lazyEraSchemaEdits(code, program), ...unparenthesizedWrapperEdits(parseAst(code, { sourceType: 'module', preserveParens: true })),
  ];
  return edits.length === 0 ? code : applyEdits(code, edits);
}

export function pureSchemaBuilders() {
  return {
    name: 'pure-schema-builders',
    transform: {
      filter: { id: SDK_FILE },
      handler(code) {
        const marked = markPureSchemaCalls(code);
        return marked === code ? null : { code: marked, map: null };
      },
    },
  };
}
