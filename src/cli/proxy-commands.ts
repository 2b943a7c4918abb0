// The operator's proxy commands (`teaminfra admin ...`): build the proxy image (Debian's Caddy,
// offline) on an engine. A server's proxy itself is started by the Docker driver.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { ProgramError } from '../engine/apps/images/run-program.js';
import { DockerApi, DockerError } from '../engine/docker/docker-api.js';
import { parseEngineAddress } from '../engine/docker/engine-address.js';
import { ensureProxyImage } from '../engine/docker/proxy/proxy-image.js';
import { defaultDockerHost, engineAddressOption } from './docker-commands.js';
import { parseOptions } from './options.js';
import { UsageError } from './usage.js';

export const PROXY_COMMANDS = {
  'build-proxy-image': async (_db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { 'docker-host': { type: 'string' } }, 'build-proxy-image');
    const api = new DockerApi(parseEngineAddress(engineAddressOption(values['docker-host'] ?? defaultDockerHost(), 'build-proxy-image')));
    try {
      await api.ping();
      const { image, contentImage, built } = await ensureProxyImage(api, (line) => process.stderr.write(`build-proxy-image: ${line}\n`));
      return { image, content_image: contentImage, built };
    } catch (error) {
      if (error instanceof DockerError) throw new UsageError(`build-proxy-image: ${error.reason}`);
      if (error instanceof ProgramError) throw new UsageError(`build-proxy-image: ${error.message}`);
      throw error;
    } finally {
      await api.close();
    }
  },
};
