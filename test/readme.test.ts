// The shell examples of the README and of every page under docs/, each page read top to bottom
// as one shell session: a variable an example uses must be set in that example or an earlier one
// of the same page, so that a reader who copies them never runs `curl $BASE/api/...` with $BASE
// empty (what the decision and mail-catcher blocks did).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';

const PAGES = ['README.md', ...readdirSync(join(packageRoot, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

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

describe('README.md and docs/', () => {
  it.each(PAGES)('%s sets every variable its shell examples use before they use it', (page) => {
    expect(unsetVariables(readFileSync(join(packageRoot, page), 'utf8'))).toEqual([]);
  });

  it('reads the pages the README moved to', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['docs/rest-api.md', 'docs/webhooks-and-decisions.md', 'docs/operations.md']));
  });

  it('finds a variable used without being set when a block uses one', () => {
    expect(unsetVariables('```sh\ncurl $BASE/api\n```\n')).toEqual([{ block: 'curl $BASE/api', missing: ['BASE'] }]);
    expect(unsetVariables('```sh\nBASE=http://x\n```\n\n```sh\ncurl $BASE/api\n```\n')).toEqual([]);
  });
});
