// better-sqlite3 13 is a Node-API addon shipped prebuilt for each platform: the one build loads on
// every Node.js from 22 on, and nothing is compiled at install. On an older Node.js it does not
// fail to load with an error: the process crashes (a segmentation fault on Node 20). An MCP
// client may start teaminfra with its own Node.js, or a version manager with another default, so
// the running Node.js is checked here, before the first `new SQLite(...)` loads the addon, and a
// failure to load it for another reason (a damaged or foreign install) becomes one sentence too.
import SQLite from 'better-sqlite3';
import { packageRoot } from '../package-root.js';

/** The oldest Node.js major the SQLite driver runs on (package.json's engines say the same). */
export const OLDEST_NODE_MAJOR = 22;

export interface Runtime {
  version: string;
  execPath: string;
}

// process.versions.node, not process.version: tests play an older Node.js by replacing it.
const THIS_RUNTIME: Runtime = { version: `v${process.versions.node}`, execPath: process.execPath };

/** Opens a SQLite database file, refusing a Node.js the driver crashes on and explaining an addon that cannot load. */
export function openSqliteFile(path: string): SQLite.Database {
  const refusal = runtimeRefusal();
  if (refusal !== undefined) throw new Error(refusal);
  try {
    return new SQLite(path);
  } catch (error) {
    const explanation = addonLoadFailure(error);
    if (explanation === undefined) throw error;
    throw new Error(explanation, { cause: error });
  }
}

/** One sentence refusing a Node.js older than the driver supports (undefined when it is not). */
export function runtimeRefusal(runtime: Runtime = THIS_RUNTIME): string | undefined {
  if (Number(runtime.version.replace(/^v/, '').split('.')[0]) >= OLDEST_NODE_MAJOR) return undefined;
  return `teaminfra needs Node.js ${OLDEST_NODE_MAJOR} or newer (its SQLite driver, better-sqlite3, crashes on older ones) ` +
    `but was started by Node.js ${runtime.version} (${runtime.execPath}): start it with Node.js 24 or 22 ` +
    '(for example installed with `npm install -g node@24`).';
}

/** One sentence for a failure to load the addon (undefined for any other error). */
export function addonLoadFailure(error: unknown, runtime: Runtime = THIS_RUNTIME, checkout = packageRoot): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_DLOPEN_FAILED' || typeof message !== 'string') return undefined;
  return `The SQLite driver (better-sqlite3) cannot be loaded by Node.js ${runtime.version} (${message.split('\n')[0]}): ` +
    `run "npm ci" in ${checkout} with the Node.js that starts teaminfra (${runtime.execPath}).`;
}
