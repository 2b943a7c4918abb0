// `teaminfra admin set-registry-credentials --server ID --registry HOST[:PORT] --username U
// --password-file F` (or `--remove`): the login a Docker server's engine gives an image registry
// when it pulls an image an app definition names (src/engine/docker/image-pull.ts). The password
// is read from a file, never from the command line (where `ps` and shell histories would show
// it), kept sealed with the secrets key, and never printed: the answer names the login only.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { isRegistryName, registryName } from '../engine/docker/image-reference.js';
import { removeRegistryCredentials, setRegistryCredentials } from '../engine/docker/registry-credentials.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { operatorAudit } from './operator-audit.js';
import { parseOptions, required, secretFromFile } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'set-registry-credentials';

async function setRegistryCredentialsCommand(
  db: Kysely<Database>, args: string[], _stdin: () => Promise<string>, secrets: () => Promise<SecretBox>,
): Promise<object> {
  const values = parseOptions(args, {
    server: { type: 'string' }, registry: { type: 'string' }, username: { type: 'string' }, 'password-file': { type: 'string' }, remove: { type: 'boolean' },
  }, COMMAND);
  const serverId = required(values, 'server', COMMAND);
  const server = await db.selectFrom('servers').leftJoin('docker_servers', 'docker_servers.server_id', 'servers.id')
    .select(['servers.id', 'servers.team_id', 'docker_servers.docker_host']).where('servers.id', '=', serverId).executeTakeFirst();
  if (!server) throw new UsageError(`${COMMAND}: there is no server ${serverId}.`);
  if (!server.docker_host) throw new UsageError(`${COMMAND}: server ${serverId} is not a Docker server; only a Docker engine pulls images.`);
  const written = required(values, 'registry', COMMAND);
  if (!isRegistryName(written)) {
    throw new UsageError(`${COMMAND}: --registry is a registry's HOST[:PORT] as image names start with it (registry.example.com, ` +
      `127.0.0.1:5000, docker.io for Docker Hub), without a scheme or path; got "${written}".`);
  }
  const registry = registryName(written);
  if (values.remove) {
    if (values.username !== undefined || values['password-file'] !== undefined) throw new UsageError(`${COMMAND}: --remove takes no --username or --password-file.`);
    const removed = await removeRegistryCredentials(db, serverId, registry);
    await operatorAudit(db, server.team_id, 'remove_registry_credentials', 'server', serverId);
    return { server_id: serverId, registry, removed };
  }
  const username = required(values, 'username', COMMAND);
  const password = secretFromFile(required(values, 'password-file', COMMAND), COMMAND, "the registry's password (or token)");
  const updatedAt = await setRegistryCredentials(db, await secrets(), serverId, registry, { username, password });
  await operatorAudit(db, server.team_id, 'set_registry_credentials', 'server', serverId);
  return { server_id: serverId, registry, username, updated_at: updatedAt, takes_effect: "at the next pull from this registry by the server's engine" };
}

export const REGISTRY_COMMANDS = { [COMMAND]: setRegistryCredentialsCommand };
