// The definitions shipped with teaminfra (bundled/*.yml): listed by `admin list-apps` without
// being added, and taken by name like the ones an operator adds. They go through the same parse
// as any other file, so a bundled file that stopped being valid fails its test, not a service.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';
import type { AppDefinition } from './app-definition.js';
import { parseAppDefinition } from './parse-app-definition.js';

export const BUNDLED_APP_NAMES = ['demo', 'tryton'] as const;

export function bundledAppText(name: string): string | null {
  if (!(BUNDLED_APP_NAMES as readonly string[]).includes(name)) return null;
  return readFileSync(join(packageRoot, 'src', 'engine', 'apps', 'bundled', `${name}.yml`), 'utf8');
}

export function bundledApp(name: string): AppDefinition | null {
  const text = bundledAppText(name);
  return text === null ? null : parseAppDefinition(text, name);
}
