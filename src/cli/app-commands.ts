// The operator's app commands (`teaminfra admin ...`): add an app definition (a Compose file),
// list the apps teams may pick, and build the images an app names, offline, on an engine.
// Definitions are the operator's: no capability (tools/) creates one.
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { addApp, findApp, listApps, summary } from '../engine/apps/app-registry.js';
import { buildAppImages } from '../engine/apps/images/build-app-images.js';
import { ProgramError } from '../engine/apps/images/run-program.js';
import { AppDefinitionError } from '../engine/apps/parse-app-definition.js';
import { DockerApi, DockerError } from '../engine/docker/docker-api.js';
import { parseEngineAddress } from '../engine/docker/engine-address.js';
import { defaultDockerHost, engineAddressOption } from './docker-commands.js';
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
      const { app, addedAt } = await addApp(db, source, {
        name: values.name === undefined ? undefined : required(values, 'name', 'add-app'), replace: Boolean(values.replace),
      });
      return summary(app, 'added', addedAt);
    } catch (error) {
      if (error instanceof AppDefinitionError) throw new UsageError(`add-app: ${file} is refused. ${error.problems.join(' ')}`);
      throw error;
    }
  },
  'list-apps': async (db: Kysely<Database>, args: string[]) => {
    parseOptions(args, {}, 'list-apps');
    return { apps: await listApps(db) };
  },
  'build-app-images': async (db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { app: { type: 'string' }, 'docker-host': { type: 'string' } }, 'build-app-images');
    const name = required(values, 'app', 'build-app-images');
    const app = await findApp(db, name).catch((error: unknown) => {
      if (error instanceof AppDefinitionError) throw new UsageError(`build-app-images: the app "${name}" is refused today: ${error.problems.join(' ')}`);
      throw error;
    });
    if (!app) throw new UsageError(`build-app-images: no app named "${name}"; "teaminfra admin list-apps" lists them.`);
    const api = new DockerApi(parseEngineAddress(engineAddressOption(values['docker-host'] ?? defaultDockerHost(), 'build-app-images')));
    try {
      await api.ping();
      const images = await buildAppImages(api, app, (line) => process.stderr.write(`build-app-images: ${line}\n`));
      return { app: app.name, images: images.map(({ image, contentImage, built }) => ({ image, content_image: contentImage, built })) };
    } catch (error) {
      if (error instanceof DockerError) throw new UsageError(`build-app-images: ${error.reason}`);
      if (error instanceof ProgramError) throw new UsageError(`build-app-images: ${error.message}`);
      throw error;
    } finally {
      await api.close();
    }
  },
};
