// Where a Docker service's mail goes, for both drivers (the demo image's contract and an app
// definition's containers): a copy's always to the mail catcher, with the login the catcher gave
// it, whatever it was given; a production service's to its relay (set_outgoing_mail), with its
// login, its name pinned in the containers' /etc/hosts to the address checked at this start
// (src/engine/outgoing-relay-target.ts); none without one.
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { relayLoginOf } from '../../mail/outgoing-relay.js';
import type { RelayPolicy } from '../../mail/relay-address.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { ServerSpec, ServiceSpec } from '../driver.js';
import { outgoingRelayTarget } from '../outgoing-relay-target.js';
import { readDockerState } from './docker-state.js';

export interface MailRelay {
  host: string;
  port: number;
  user: string | null;
  password: string | null;
  /** Docker ExtraHosts entries ("name:address") that make the relay's name lead to its checked address in the containers. */
  pinnedHosts: string[];
}

export interface MailRelaySources {
  db: Kysely<Database>;
  secrets: SecretBox;
  /** The mail catcher's address as the server's containers reach it, `host:port`; null when none listens. Rejects, saying what to set, when they cannot. */
  containerMailRelay(server: ServerSpec): Promise<string | null>;
  /** How a production service's relay is checked at each start. */
  outgoingRelay: RelayPolicy;
}

export async function mailRelayOf(sources: MailRelaySources, service: ServiceSpec): Promise<MailRelay | null> {
  if (service.parentId !== null) {
    const relay = await sources.containerMailRelay(service.server);
    if (!relay) return null;
    const separator = relay.lastIndexOf(':');
    const { mail } = await readDockerState(sources.db, sources.secrets, service.id);
    return {
      host: relay.slice(0, separator).replace(/^\[|\]$/g, ''), port: Number(relay.slice(separator + 1)),
      user: mail?.username ?? null, password: mail?.password ?? null, pinnedHosts: [],
    };
  }
  const target = await outgoingRelayTarget(service, sources.outgoingRelay);
  if (!target) return null;
  const login = await relayLoginOf(sources.db, sources.secrets, service.id);
  const pinned = target.address !== null && isIP(target.host.replace(/^\[|\]$/g, '')) === 0;
  return {
    host: target.host, port: target.port, user: login?.user ?? null, password: login?.password ?? null,
    pinnedHosts: pinned ? [`${target.host}:${target.address}`] : [],
  };
}
