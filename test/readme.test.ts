// The README's shell examples, read top to bottom as one shell session: a variable an example
// uses must be set in that example or an earlier one, so that a reader who copies them never
// runs `curl $BASE/api/...` with $BASE empty (what the decision and mail-catcher blocks did).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';

const README = readFileSync(join(packageRoot, 'README.md'), 'utf8');

/** Variables a shell block uses that neither it nor an earlier block sets. */
function unsetVariables(markdown: string): { block: string; missing: string[] }[] {
  const set = new Set<string>();
  const found: { block: string; missing: string[] }[] = [];
  for (const [, block = ''] of markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    for (const [, name] of block.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Z_][A-Z0-9_]*)=/gm)) set.add(name as string);
    const missing = [...new Set([...block.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)].map((match) => match[1] as string))].filter((name) => !set.has(name));
    if (missing.length > 0) found.push({ block: block.split('\n')[0] as string, missing });
  }
  return found;
}

describe('README.md', () => {
  it('sets every variable its shell examples use before they use it', () => {
    expect(unsetVariables(README)).toEqual([]);
  });

  it('finds a variable used without being set when a block uses one', () => {
    expect(unsetVariables('```sh\ncurl $BASE/api\n```\n')).toEqual([{ block: 'curl $BASE/api', missing: ['BASE'] }]);
    expect(unsetVariables('```sh\nBASE=http://x\n```\n\n```sh\ncurl $BASE/api\n```\n')).toEqual([]);
  });
});
