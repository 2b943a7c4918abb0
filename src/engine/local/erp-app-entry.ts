// Where the compiled ERP application is. A service process is plain `node`, so it always runs
// the compiled JavaScript: beside this file when we run compiled, from dist/ when the control
// plane itself runs from TypeScript sources (the tests).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../package-root.js';

const here = fileURLToPath(import.meta.url);

export function erpAppEntry(): string {
  const entry = here.endsWith('.js')
    ? join(dirname(here), '..', 'erp-app', 'main.js')
    : join(packageRoot, 'dist', 'src', 'engine', 'erp-app', 'main.js');
  if (!existsSync(entry)) throw new Error(`The ERP application is not built (${entry} is missing); run "npm run build".`);
  return entry;
}
