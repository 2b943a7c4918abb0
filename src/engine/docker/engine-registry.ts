// One API client per Docker engine this node talks to, and each server's image contract: the
// engine must answer and have the image (the bundled one is built there when missing, an
// operator's pulled from its registry), else the operation fails with a sentence naming the
// server and what to do.
import type { ServerSpec } from '../driver.js';
import { DriverError } from '../driver.js';
import { DockerApi, DockerError, engineCallTimeoutFromEnv } from './docker-api.js';
import { EngineAddressError, parseEngineAddress, type EngineAddress } from './engine-address.js';
import { buildErpImage } from './erp-image.js';
import { contractOf, type ImageContract } from './erp-image-contract.js';
import { ensureImage, inspectImage, type EngineImage } from './image-pull.js';
import { parseImageReference } from './image-reference.js';
import type { RegistryLogin } from './registry-credentials.js';

/** How long a contract (the image's labels) is trusted before the engine is asked again. */
const CONTRACT_TTL_MS = 60_000;

export class EngineRegistry {
  private readonly engines = new Map<string, { api: DockerApi; address: EngineAddress }>();
  private readonly contracts = new Map<string, { at: number; contract: Promise<ImageContract> }>();
  private readonly frontImages = new Map<string, Promise<string>>();

  /**
   * `callTimeoutMs`: each engine call's deadline (docker-api.ts). `loginOf`: the server's login to
   * a registry (registry-credentials.ts), for a server image the engine must pull; none: pulled
   * as anyone may (a server not yet written has no login).
   */
  constructor(
    private readonly callTimeoutMs = engineCallTimeoutFromEnv(),
    private readonly loginOf: (serverId: string, registry: string) => Promise<RegistryLogin | null> = async () => null,
  ) {}

  engineOf(server: ServerSpec): { api: DockerApi; address: EngineAddress } {
    if (!server.docker) throw new Error(`server ${server.id} is not Docker-backed`);
    const known = this.engines.get(server.docker.host);
    if (known) return known;
    let address: EngineAddress;
    try {
      address = parseEngineAddress(server.docker.host);
    } catch (error) {
      if (error instanceof EngineAddressError) throw new DriverError(`Server ${server.id}: ${error.message}`);
      throw error;
    }
    const engine = { api: new DockerApi(address, this.callTimeoutMs), address };
    this.engines.set(server.docker.host, engine);
    return engine;
  }

  contractOf(server: ServerSpec): Promise<ImageContract> {
    const key = `${server.docker?.host} ${server.docker?.image ?? ''}`;
    const cached = this.contracts.get(key);
    if (cached && Date.now() - cached.at < CONTRACT_TTL_MS) return cached.contract;
    const contract = this.readContract(server);
    this.contracts.set(key, { at: Date.now(), contract });
    contract.catch(() => this.contracts.delete(key));
    return contract;
  }

  /** The bundled ERP image on the server's engine (built there when missing), which runs each service's front (service-front.ts). */
  frontImageOf(server: ServerSpec): Promise<string> {
    const key = server.docker?.host ?? '';
    const known = this.frontImages.get(key);
    if (known) return known;
    const { api } = this.engineOf(server);
    const image = buildErpImage(api).then(({ image: name }) => name, (error: unknown) => {
      this.frontImages.delete(key);
      if (error instanceof DockerError) throw new DriverError(`Server ${server.id}: ${error.reason}`, false, { cause: error });
      throw error;
    });
    this.frontImages.set(key, image);
    return image;
  }

  async close(): Promise<void> {
    await Promise.all([...this.engines.values()].map(({ api }) => api.close()));
    this.engines.clear();
  }

  /** Ends every engine connection now, calls in flight included. */
  async destroy(): Promise<void> {
    await Promise.all([...this.engines.values()].map(({ api }) => api.destroy()));
    this.engines.clear();
  }

  /** The server's own image, pulled from its registry as a definition's images are (image-pull.ts), or a sentence saying what to do. */
  private async pulled(server: ServerSpec, image: string): Promise<EngineImage> {
    const { api, address } = this.engineOf(server);
    let reference;
    try {
      reference = parseImageReference(image);
    } catch {
      throw new DriverError(`Server ${server.id}: the image "${image}" does not exist on the Docker engine at ${address.text}, and its name ` +
        'names no registry to pull it from. Load or build it on that engine, or give the server another image.');
    }
    try {
      return await ensureImage(api, reference, { serverId: server.id, namedBy: `server ${server.id}`, login: await this.loginOf(server.id, reference.registry) });
    } catch (error) {
      if (!(error instanceof DriverError)) throw error;
      throw new DriverError(`Server ${server.id}: the image "${image}" does not exist on the Docker engine at ${address.text}, and pulling it ` +
        `failed. ${error.reason} Or load or build it on that engine, or give the server another image.`, false, { cause: error });
    }
  }

  private async readContract(server: ServerSpec): Promise<ImageContract> {
    const { api, address } = this.engineOf(server);
    try {
      await api.ping();
      const image = server.docker?.image ?? (await buildErpImage(api)).image;
      const present = await inspectImage(api, image);
      return contractOf(image, (present ?? await this.pulled(server, image)).labels);
    } catch (error) {
      if (error instanceof DockerError) throw new DriverError(`Server ${server.id}: ${error.reason}`, false, { cause: error });
      throw error;
    }
  }
}
