// Where a Docker service's mail goes, for both drivers (the demo image's contract and an app
// definition's containers): a copy's always to the mail catcher, with the login the catcher gave
// it, whatever it was given; a production service's to its relay (set_outgoing_mail), with its
// login; none without one.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { relayLoginOf } from '../../mail/outgoing-relay.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { ServiceSpec } from '../driver.js';
import { readDockerState } from './docker-state.js';

export interface MailRelay { host: string; port: number; user: string | null; password: string | null }

export interface MailRelaySources {
  db: Kysely<Database>;
  secrets: SecretBox;
  /** The mail catcher's address as containers reach it, `host:port`; null when none listens. */
  containerMailRelay(): string | null;
}

export async function mailRelayOf(sources: MailRelaySources, service: ServiceSpec): Promise<MailRelay | null> {
  const copy = service.parentId !== null;
  const relay = copy ? sources.containerMailRelay() : service.outgoingSmtp;
  if (!relay) return null;
  const separator = relay.lastIndexOf(':');
  const address = { host: relay.slice(0, separator), port: Number(relay.slice(separator + 1)) };
  if (copy) {
    const { mail } = await readDockerState(sources.db, sources.secrets, service.id);
    return { ...address, user: mail?.username ?? null, password: mail?.password ?? null };
  }
  const login = await relayLoginOf(sources.db, sources.secrets, service.id);
  return { ...address, user: login?.user ?? null, password: login?.password ?? null };
}
