// The operator's app commands (`teaminfra admin ...`): add an app definition (a Compose file),
// list the apps teams may pick, and build the images an app names, offline, on an engine.
// Definitions are the operator's: no capability (tools/) creates one.
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { addApp, listApps, summary } from '../engine/apps/app-registry.js';
import { AppDefinitionError } from '../engine/apps/parse-app-definition.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

export const APP_COMMANDS = {
  'add-app': async (db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { file: { type: 'string' }, name: { type: 'string' }, replace: { type: 'boolean' } }, 'add-app');
    const file = required(values, 'file', 'add-app');
    let source: string;
    try {
      source = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`add-app: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
    }
    try {
      const app = await addApp(db, source, { name: values.name === undefined ? undefined : required(values, 'name', 'add-app'), replace: Boolean(values.replace) });
      return summary(app, 'added', null);
    } catch (error) {
      if (error instanceof AppDefinitionError) throw new UsageError(`add-app: ${file} is refused. ${error.problems.join(' ')}`);
      throw error;
    }
  },
  'list-apps': async (db: Kysely<Database>, args: string[]) => {
    parseOptions(args, {}, 'list-apps');
    return { apps: await listApps(db) };
  },
};
