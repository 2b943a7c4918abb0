// scripts/patch-zod-add-issue.mjs, run after install: zod's per-parse addIssue function named in a
// local before it is stored, so that V8 allocates it young (src/mcp/README.md, "Garbage per call").
// The rewrite on stand-in text, then on the zod installed here, then the difference it makes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { packageRoot } from '../../src/package-root.js';
import { inV8Child } from '../support/v8-child.js';

interface PatchModule {
  ZOD_FILES: string[];
  nameAddIssue(source: string, file?: string): { source: string; changed: boolean };
}
const patch = await import(pathToFileURL(join(packageRoot, 'scripts', 'patch-zod-add-issue.mjs')).href) as PatchModule;

const ZOD_LIKE = [
  'export function _check(fn) {',
  '    return (payload) => {',
  '        payload.addIssue = (issue) => {',
  '            payload.issues.push(issue);',
  '        };',
  '        return fn(payload.value, payload);',
  '    };',
  '}',
  '',
].join('\n');

describe('naming zod\'s addIssue before it is stored', () => {
  it('turns the function written into payload.addIssue into a local, then stores that', () => {
    const { source, changed } = patch.nameAddIssue(ZOD_LIKE);
    expect(changed).toBe(true);
    expect(source).toBe([
      'export function _check(fn) {',
      '    return (payload) => {',
      '        const addIssue = (issue) => {',
      '            payload.issues.push(issue);',
      '        };',
      '        payload.addIssue = addIssue;',
      '        return fn(payload.value, payload);',
      '    };',
      '}',
      '',
    ].join('\n'));
  });

  it('leaves a file it already changed as it is, so installing twice is harmless', () => {
    const once = patch.nameAddIssue(ZOD_LIKE).source;
    expect(patch.nameAddIssue(once)).toEqual({ source: once, changed: false });
  });

  it('stops the install with a sentence when zod no longer has the line', () => {
    expect(() => patch.nameAddIssue('export const nothing = 1;\n', 'v4/core/api.js'))
      .toThrow(/zod's v4\/core\/api\.js no longer writes "payload\.addIssue = \(issue\) => \{": zod changed/);
  });

  it('has been run on the zod installed here', () => {
    for (const file of patch.ZOD_FILES) {
      const source = readFileSync(join(packageRoot, 'node_modules', 'zod', file), 'utf8');
      expect(source, file).not.toMatch(/payload\.addIssue = \(issue\) =>/);
      expect(source, file).toContain('payload.addIssue = addIssue;');
    }
  });

  it('keeps what a transform and a refinement report', () => {
    const noX = z.string().transform((value, ctx) => {
      if (value === 'x') ctx.addIssue({ code: 'custom', message: 'no x' });
      return value.toUpperCase();
    });
    expect(noX.safeParse('y')).toEqual({ success: true, data: 'Y' });
    expect(noX.safeParse('x').error?.issues.map((issue) => issue.message)).toEqual(['no x']);
    const refined = z.number().superRefine((value, ctx) => { if (value > 1) ctx.addIssue({ code: 'custom', message: 'too big' }); });
    expect(refined.safeParse(2).error?.issues.map((issue) => issue.message)).toEqual(['too big']);
  });

  it('lets the value a transform parsed die young', () => {
    // The function a transform's parse stores: a child process with V8's flag to ask where it lives.
    const seen = inV8Child(`
      import { z } from 'zod';
      let stored;
      const schema = z.unknown().transform((value, ctx) => { stored = ctx.addIssue; return value; });
      schema.parse({ page: [1, 2, 3] });
      console.log(JSON.stringify({ young: %InYoungGeneration(stored) }));
    `);
    expect(seen.young).toBe(true);
  });
});
