// Where the compiled ERP application (and the database worker) are. A service process is plain
// `node`, and a worker thread loads JavaScript, so they always run the compiled code: beside
// this file when we run compiled, from dist/ when the control plane itself runs from
// TypeScript sources (the tests).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../package-root.js';

const here = fileURLToPath(import.meta.url);

/** The compiled file at `segments` under src/engine/. */
export function compiledEntry(...segments: string[]): string {
  const entry = here.endsWith('.js')
    ? join(dirname(here), '..', ...segments)
    : join(packageRoot, 'dist', 'src', 'engine', ...segments);
  if (!existsSync(entry)) throw new Error(`teaminfra is not built (${entry} is missing); run "npm run build".`);
  return entry;
}

export function erpAppEntry(): string {
  return compiledEntry('erp-app', 'main.js');
}
