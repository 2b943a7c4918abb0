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
// Schema validator rather than when it loads (lazyRequireEdits below).
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

/** The module with its zod-built constants marked pure and its spec-type registry built only when read. */
export function markPureSchemaCalls(code) {
  const program = parseAst(code, { sourceType: 'module' });
  const edits = pureSchemaEdits(code, program).concat(registryEdits(code, program), lazyRequireEdits(code, program));
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
