// Run after install (package.json "postinstall"): one change to the installed zod, in the four
// files that have it. zod's `transform` and `superRefine` write a fresh function into the parse
// payload on every parse (`payload.addIssue = (issue) => { ... }`). V8 allocates a function
// literal written straight into a property in the old generation, and an old function keeps its
// closure, here the payload and the whole value being parsed, alive through every young
// collection until the next full one. The SDK checks every tools/call result with a transform,
// so every MCP call's result was copied twice and promoted: about 20 us of CPU a call in the
// SDK's own loop (src/mcp/README.md, "Garbage per call"). The same function, first named in a
// local, is allocated young and dies with the parse. Behaviour is unchanged.
// zod is pinned (package.json), so the text matched here is known; if an upgrade changes it, the
// install stops with a sentence rather than silently losing the fix.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ZOD_FILES = ['v4/classic/schemas.js', 'v4/classic/schemas.cjs', 'v4/core/api.js', 'v4/core/api.cjs'];

const STORED_LITERAL = /^( +)payload\.addIssue = \(issue\) => \{\n/m;
const PATCHED = 'payload.addIssue = addIssue;';

/** The source with its one `payload.addIssue = (issue) => {...};` made a named local first; `changed` false when it already was. */
export function nameAddIssue(source, file = 'the file') {
  const start = STORED_LITERAL.exec(source);
  if (!start) {
    if (source.includes(PATCHED)) return { source, changed: false };
    throw new Error(`zod's ${file} no longer writes "payload.addIssue = (issue) => {": zod changed, so scripts/patch-zod-add-issue.mjs must be looked at again (src/mcp/README.md, "Garbage per call").`);
  }
  const indent = start[1];
  const close = `\n${indent}};\n`;
  const end = source.indexOf(close, start.index);
  if (end === -1) throw new Error(`zod's ${file}: the end of its addIssue function was not found where scripts/patch-zod-add-issue.mjs expects it.`);
  const body = source.slice(start.index + start[0].length, end + 1);
  const named = `${indent}const addIssue = (issue) => {\n${body}${indent}};\n${indent}${PATCHED}\n`;
  const patched = source.slice(0, start.index) + named + source.slice(end + close.length);
  if (STORED_LITERAL.test(patched)) throw new Error(`zod's ${file} writes addIssue more than once: scripts/patch-zod-add-issue.mjs expects one.`);
  return { source: patched, changed: true };
}

/** Patches the zod installed under `root`/node_modules; returns the files it changed. */
export function patchInstalledZod(root) {
  const zod = join(root, 'node_modules', 'zod');
  const changed = [];
  for (const file of ZOD_FILES) {
    const path = join(zod, file);
    const result = nameAddIssue(readFileSync(path, 'utf8'), file);
    if (result.changed) {
      writeFileSync(path, result.source);
      changed.push(file);
    }
  }
  return changed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const changed = patchInstalledZod(root);
  if (changed.length > 0) console.log(`zod: addIssue named before it is stored, in ${changed.join(', ')}`);
}
