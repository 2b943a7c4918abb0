// better-sqlite3 is a native addon, compiled for one Node.js ABI when the checkout is installed.
// Started by another Node.js (an MCP client's own, a version manager's other default), loading it
// fails with Node's several-line NODE_MODULE_VERSION message, which names neither the package nor
// what to run. The addon is loaded on the first `new SQLite(...)`, so this is where that failure
// is turned into one sentence saying what to run, with both versions.
import SQLite from 'better-sqlite3';
import { packageRoot } from '../package-root.js';

/** Node.js major versions by NODE_MODULE_VERSION (node/doc/abi_version_registry.json). */
const NODE_OF_ABI: Readonly<Record<string, string>> = {
  '108': '18', '111': '19', '115': '20', '120': '21', '127': '22', '131': '23', '137': '24',
};

export interface Runtime {
  version: string;
  abi: string;
  execPath: string;
}

const THIS_RUNTIME: Runtime = { version: process.version, abi: process.versions.modules, execPath: process.execPath };

/** Opens a SQLite database file, explaining a native addon built for another Node.js. */
export function openSqliteFile(path: string): SQLite.Database {
  try {
    return new SQLite(path);
  } catch (error) {
    const explanation = addonLoadFailure(error);
    if (explanation === undefined) throw error;
    throw new Error(explanation, { cause: error });
  }
}

/** One sentence for a failure to load the addon (undefined for any other error). */
export function addonLoadFailure(error: unknown, runtime: Runtime = THIS_RUNTIME, checkout = packageRoot): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_DLOPEN_FAILED' || typeof message !== 'string') return undefined;
  const rebuild = `run "npm rebuild better-sqlite3" in ${checkout} with the Node.js that starts teaminfra (${runtime.execPath})`;
  const built = /compiled against a different Node\.js version using\s+NODE_MODULE_VERSION (\d+)/.exec(message)?.[1];
  if (built === undefined) {
    return `The SQLite driver (better-sqlite3) cannot be loaded by Node.js ${runtime.version} ` +
      `(${message.split('\n')[0]}): ${rebuild}.`;
  }
  const builtFor = NODE_OF_ABI[built] ? `Node.js ${NODE_OF_ABI[built]} (NODE_MODULE_VERSION ${built})` : `NODE_MODULE_VERSION ${built}`;
  return `The SQLite driver (better-sqlite3) was built for ${builtFor} but teaminfra runs on Node.js ${runtime.version} ` +
    `(NODE_MODULE_VERSION ${runtime.abi}): ${rebuild}, or start teaminfra with the Node.js it was built for.`;
}
