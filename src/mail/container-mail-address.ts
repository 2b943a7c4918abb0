// Where the containers of a Docker server reach this server's mail catcher, asked each time a
// copy is made or started there. A copy's email must be kept (the catcher is the promise of a
// copy), so when its containers cannot reach the catcher the copy is refused with what to set,
// never started to lose its mail quietly.
//
// With the defaults the catcher listens on loopback, which no container reaches. For an engine
// on this machine (a unix socket) it then also listens on the gateway of the engine's default
// bridge network, found through the engine's API: the host's own address on docker0, which the
// engine's containers reach from its default bridge and from the networks it makes (traffic to
// the host itself, not forwarded between networks). Only there, and every copy still logs in
// with its own credentials. An engine elsewhere cannot reach this machine's loopback nor its
// bridge: the operator says where (TEAMINFRA_SMTP_HOST, TEAMINFRA_SMTP_ADDRESS_FOR_CONTAINERS).
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { bridgeGateway } from '../engine/docker/bridge-gateway.js';
import { DockerApi } from '../engine/docker/docker-api.js';
import { parseEngineAddress, type EngineAddress } from '../engine/docker/engine-address.js';
import { DriverError } from '../engine/driver.js';
import type { MailCatcher } from './mail-catcher.js';

export interface ContainerMailSettings {
  /** The address the catcher listens on (TEAMINFRA_SMTP_HOST; loopback by default). */
  host: string;
  /** TEAMINFRA_SMTP_ADDRESS_FOR_CONTAINERS: "host:port" as containers reach the catcher, whatever the engine. */
  addressForContainers: string | undefined;
}

export interface DockerEngine {
  api: DockerApi;
  address: EngineAddress;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);
const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);

export class ContainerMailAddress {
  /** Each local engine's bridge gateway, by engine address, once found. */
  private readonly gateways = new Map<string, Promise<string>>();

  constructor(private readonly catcher: MailCatcher, private readonly settings: ContainerMailSettings) {}

  /**
   * "host:port" of the catcher as `engine`'s containers reach it; null while the catcher is not
   * listening (it is not started, as in tests without mail). Throws a DriverError saying what to
   * set when they cannot reach it.
   */
  async of(engine: DockerEngine): Promise<string | null> {
    const { port } = this.catcher;
    if (port <= 0) return null;
    if (this.settings.addressForContainers) return this.settings.addressForContainers;
    const host = this.settings.host;
    // An address of this machine the operator chose (a LAN address, the bridge's own): containers are told it.
    if (!WILDCARDS.has(host) && !isLoopback(host)) return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    if (engine.address.kind !== 'unix') throw this.refusal(`the engine at ${engine.address.text} runs on another machine`, REACHABLE_HOST);
    // Listening on every address already: the engine maps host.docker.internal to its bridge's gateway.
    if (WILDCARDS.has(host)) return `host.docker.internal:${port}`;
    const gateway = await this.gatewayOf(engine);
    await this.catcher.listenAlso(gateway).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') throw this.refusal(`another program holds port ${port} on ${gateway}, the gateway of its bridge network`, FREE_PORT);
      throw this.refusal(`the catcher cannot listen on ${gateway}, the gateway of its bridge network, which is not an address of this machine ` +
        `(${error.code ?? 'error'}; so it is with Docker Desktop or rootless Docker)`, REACHABLE_HOST);
    });
    return `${gateway}:${port}`;
  }

  /**
   * At serve's start: copies that kept running while it was stopped were told an address on
   * their engine's bridge; the catcher listens there again before their next email. Answers the
   * sentences of the engines where it could not (for the log); a copy's next start asks again.
   */
  async listenForCopies(db: Kysely<Database>): Promise<string[]> {
    const rows = await db.selectFrom('erp_services as s').innerJoin('docker_servers as d', 'd.server_id', 's.server_id')
      .select('d.docker_host').distinct().where('s.parent_id', 'is not', null).where('s.deleted_at', 'is', null).execute();
    const failures: string[] = [];
    for (const { docker_host: text } of rows) {
      let address: EngineAddress;
      try {
        address = parseEngineAddress(text);
      } catch {
        continue;
      }
      const api = new DockerApi(address);
      try {
        await this.of({ api, address });
      } catch (error) {
        failures.push(error instanceof DriverError ? error.reason : `the Docker engine at ${address.text}: ${(error as Error).message}`);
      } finally {
        await api.close();
      }
    }
    return failures;
  }

  private gatewayOf(engine: DockerEngine): Promise<string> {
    let found = this.gateways.get(engine.address.text);
    if (!found) {
      found = bridgeGateway(engine.api).then((gateway) => {
        if (!gateway) throw this.refusal(`the engine at ${engine.address.text} has no default bridge network with an IPv4 gateway`, REACHABLE_HOST);
        return gateway;
      });
      // A failure (the engine down, no bridge yet) is asked again next time.
      found.catch(() => this.gateways.delete(engine.address.text));
      this.gateways.set(engine.address.text, found);
    }
    return found;
  }

  private refusal(why: string, what: string): DriverError {
    return new DriverError(`A copy's email would be lost: this server's mail catcher (${this.settings.host}:${this.catcher.port}) cannot be reached ` +
      `from the Docker engine's containers, because ${why}. No copy is made or started on that engine until it can: set ${what}, then restart teaminfra serve.`);
  }
}

const REACHABLE_HOST = 'TEAMINFRA_SMTP_HOST to an address of this machine that the engine\'s containers reach ' +
  '(or TEAMINFRA_SMTP_ADDRESS_FOR_CONTAINERS to the host:port they reach the catcher at)';
const FREE_PORT = 'TEAMINFRA_SMTP_PORT to a port free on that address';
