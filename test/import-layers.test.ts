// The import graph of src/ and tools/, read from the sources with TypeScript's own parser (every
// import: type-only ones, re-exports and dynamic import() too, since each is a dependency a
// reader follows): no circle anywhere, and nothing in src/core/ or src/db/ imports anything above
// them. The layers are named here, bottom up; a module that is not listed in the two lower ones
// is above them.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';

/**
 * Self-contained helpers, below everything: they import no module of ours but each other (checked
 * below). They live beside the code that uses them most, but depend on nothing of it.
 */
const FOUNDATION = [
  'src/package-root.ts',
  'src/auth/expiry.ts',
  'src/auth/password.ts',
  'src/auth/permissions.ts',
  'src/auth/token-format.ts',
  'src/decisions/approvable.ts',
  'src/oauth/access-token-shape.ts',
  'src/secrets/secret-box.ts',
  'src/secrets/secrets-key.ts',
  'src/webhooks/signing.ts',
];

/** The authorization core and the database layer: they import each other and the foundation, nothing else of ours. */
const CORE_AND_DATABASE = ['src/core/', 'src/db/'];

type Graph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative module a file names, resolved to a file of the repository (`./x.js` is `./x.ts`). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) specifiers.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((specifier) => specifier.startsWith('.')).map((specifier) => {
    const path = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
    if (!existsSync(path)) throw new Error(`${relative(packageRoot, file)} imports ${specifier}, which is no file of ours.`);
    return relative(packageRoot, path);
  });
}

function importGraph(): Graph {
  const files = [...sourceFiles(join(packageRoot, 'src')), ...sourceFiles(join(packageRoot, 'tools'))];
  return new Map(files.map((file) => [relative(packageRoot, file), new Set(importsOf(file))]));
}

/** The modules that import each other, one sorted list per circle (Tarjan's strongly connected components). */
function circles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (module: string): void => {
    index.set(module, index.size);
    lowest.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const next of graph.get(module) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(module, Math.min(lowest.get(module)!, lowest.get(next)!));
      } else if (onStack.has(next)) {
        lowest.set(module, Math.min(lowest.get(module)!, index.get(next)!));
      }
    }
    if (lowest.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1 || graph.get(module)?.has(module)) found.push(component.sort());
  };
  for (const module of graph.keys()) if (!index.has(module)) visit(module);
  return found;
}

const inCoreOrDatabase = (module: string) => CORE_AND_DATABASE.some((folder) => module.startsWith(folder));

/** Imports that leave a layer for one above it, as `from -> to`. */
function upwardImports(graph: Graph): string[] {
  const upward: string[] = [];
  for (const [module, imports] of graph) {
    const allowed = FOUNDATION.includes(module)
      ? (to: string) => FOUNDATION.includes(to)
      : inCoreOrDatabase(module) ? (to: string) => FOUNDATION.includes(to) || inCoreOrDatabase(to) : undefined;
    if (!allowed) continue;
    for (const to of imports) if (!allowed(to)) upward.push(`${module} -> ${to}`);
  }
  return upward.sort();
}

describe('the import graph of src/ and tools/', () => {
  const graph = importGraph();

  it('has no circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has no import from src/core/ or src/db/, or from the foundation, to anything above them', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('names foundation modules that exist, and reads the real core and database', () => {
    expect(FOUNDATION.filter((module) => !graph.has(module))).toEqual([]);
    expect([...graph.keys()].filter((module) => module.startsWith('src/core/'))).toContain('src/core/invoke.ts');
    expect(graph.get('src/core/invoke.ts')).toContain('src/core/errors.ts');
  });

  it('finds a circle, and an arrow pointing up, when there is one', () => {
    const made: Graph = new Map([
      ['src/core/a.ts', new Set(['src/db/b.ts'])],
      ['src/db/b.ts', new Set(['src/core/a.ts', 'src/engine/c.ts'])],
      ['src/engine/c.ts', new Set(['src/core/a.ts'])],
      ['src/auth/permissions.ts', new Set(['src/db/b.ts'])],
    ]);
    expect(circles(made)).toEqual([['src/core/a.ts', 'src/db/b.ts', 'src/engine/c.ts']]);
    expect(upwardImports(made)).toEqual(['src/auth/permissions.ts -> src/db/b.ts', 'src/db/b.ts -> src/engine/c.ts']);
  });
});
