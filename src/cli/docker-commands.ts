// The operator's Docker commands (`teaminfra admin ...`): build the bundled ERP image on an
// engine, create a Docker-backed server, give a server another image or other container limits. Each checks the engine
// before it writes anything, within seconds, and says what is wrong in one sentence.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { insertServer } from '../db/repositories/servers.js';
import { DockerApi, DockerError } from '../engine/docker/docker-api.js';
import { makeDockerServer } from '../engine/docker/docker-servers.js';
import { EngineAddressError, parseEngineAddress } from '../engine/docker/engine-address.js';
import { EngineRegistry } from '../engine/docker/engine-registry.js';
import { buildErpImage } from '../engine/docker/erp-image.js';
import { ensureBackupsVolume } from '../engine/docker/backup-store.js';
import { DriverError } from '../engine/driver.js';
import { findRegistryCredentials } from '../engine/docker/registry-credentials.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { parseOptions, required } from './options.js';
import { setServerLimits } from './server-limits-command.js';
import { UsageError } from './usage.js';

/** DOCKER_HOST as the Docker CLI reads it, else this machine's engine. */
export function defaultDockerHost(): string {
  return process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

export function engineAddressOption(text: string, command: string): string {
  try {
    return parseEngineAddress(text).text;
  } catch (error) {
    if (error instanceof EngineAddressError) throw new UsageError(`${command}: --docker-host ${error.message}`);
    throw error;
  }
}

export const DOCKER_COMMANDS = {
  'build-erp-image': async (_db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { 'docker-host': { type: 'string' } }, 'build-erp-image');
    const api = new DockerApi(parseEngineAddress(engineAddressOption(values['docker-host'] ?? defaultDockerHost(), 'build-erp-image')));
    try {
      await api.ping();
      process.stderr.write(`building the ERP image on ${api.address.text} (offline: this Node and our files, no base image)...\n`);
      const { image } = await buildErpImage(api);
      return { image };
    } catch (error) {
      throw engineProblem('build-erp-image', error);
    } finally {
      await api.close();
    }
  },
  'set-server-image': async (db: Kysely<Database>, args: string[], _stdin: () => Promise<string>, secrets: () => Promise<SecretBox>) => {
    const values = parseOptions(args, { server: { type: 'string' }, image: { type: 'string' } }, 'set-server-image');
    const serverId = required(values, 'server', 'set-server-image');
    const row = await db.selectFrom('docker_servers').select(['docker_host']).where('server_id', '=', serverId).executeTakeFirst();
    if (!row) throw new UsageError(`set-server-image: server ${serverId} is not a Docker server.`);
    const image = required(values, 'image', 'set-server-image');
    // An image the engine lacks is pulled, with the login the operator set for the server (set-registry-credentials).
    const box = await secrets();
    await checkEngine({ id: serverId, dockerHost: row.docker_host, image }, 'set-server-image',
      (server, registry) => findRegistryCredentials(db, box, server, registry));
    await db.updateTable('docker_servers').set({ image }).where('server_id', '=', serverId).execute();
    return { id: serverId, image };
  },
  'set-server-limits': setServerLimits,
};

/** `create-server --docker-host URL [--image IMAGE]`: the engine answers and has the image, then the server is written. */
export async function createDockerServer(db: Kysely<Database>, values: { teamId: string; name: string; dockerHost: string; image: string | null }): Promise<string> {
  const dockerHost = engineAddressOption(values.dockerHost, 'create-server');
  const id = await insertServer(db, { teamId: values.teamId, name: values.name });
  try {
    await checkEngine({ id, dockerHost, image: values.image }, 'create-server');
  } catch (error) {
    await db.deleteFrom('servers').where('id', '=', id).execute();
    throw error;
  }
  await makeDockerServer(db, id, dockerHost, values.image);
  return id;
}

async function checkEngine(
  server: { id: string; dockerHost: string; image: string | null }, command: string, loginOf?: ConstructorParameters<typeof EngineRegistry>[1],
): Promise<void> {
  const engines = new EngineRegistry(undefined, loginOf);
  const spec = { id: server.id, rootDir: null, docker: { host: server.dockerHost, image: server.image } };
  try {
    await engines.contractOf(spec);
    await ensureBackupsVolume(engines.engineOf(spec).api, server.id);
  } catch (error) {
    throw engineProblem(command, error);
  } finally {
    await engines.close();
  }
}

function engineProblem(command: string, error: unknown): Error {
  if (error instanceof DriverError || error instanceof DockerError) return new UsageError(`${command}: ${error.reason}`);
  return error as Error;
}
