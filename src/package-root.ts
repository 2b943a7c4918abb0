// Files shipped beside the code (schema.sql, swagger-ui) are found from the package root, which
// sits at a different depth when running compiled (dist/src/...) and under vitest (src/...).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'schema.sql'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`teaminfra package root not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
