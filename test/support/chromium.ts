// Where the panel's browser suites find Chromium (Debian's package, or CHROMIUM_PATH). Read by
// vitest.config.ts, which skips those suites when it is missing, and by browser.ts, which
// launches it; kept apart from browser.ts so the config does not load playwright-core.
import { existsSync } from 'node:fs';

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH || '/usr/bin/chromium';
}

export function chromiumInstalled(env: NodeJS.ProcessEnv = process.env): boolean {
  return existsSync(chromiumPath(env));
}

/** Suites that drive the panel in Chromium; the name says so, and vitest.config.ts relies on it. */
export const BROWSER_SUITES = 'test/**/*.browser.test.ts';
