// Where the compiled ERP application (and the database worker) are. A service process is plain
// `node`, and a worker thread loads JavaScript, so they always run the compiled code under
// dist/src/engine/, found from the package root: this file may run from dist/src (compiled),
// from src (the tests, on TypeScript sources) or from `teaminfra mcp`'s bundle in dist/mcp.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';

/** The compiled file at `segments` under src/engine/. */
export function compiledEntry(...segments: string[]): string {
  const entry = join(packageRoot, 'dist', 'src', 'engine', ...segments);
  if (!existsSync(entry)) throw new Error(`teaminfra is not built (${entry} is missing); run "npm run build".`);
  return entry;
}

export function erpAppEntry(): string {
  return compiledEntry('erp-app', 'main.js');
}
