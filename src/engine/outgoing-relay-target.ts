// Where a production service's outgoing mail connects, as both drivers give it at a start or a
// redeploy: the relay's host and port, and the address its name was resolved to and checked
// against the private ranges just now (src/mail/relay-address.ts). The service connects to that
// address at every connection, never to what the name resolves to later.
import { checkedRelayAddress, RelayRefused, type RelayPolicy } from '../mail/relay-address.js';
import { DriverError, type ServiceSpec } from './driver.js';

export interface RelayTarget {
  host: string;
  port: number;
  /** The checked address to connect to; null: the host as it is (the operator allows private relays). */
  address: string | null;
}

/** Null without a relay; a DriverError with the sentence when the relay's host may not be connected to now. */
export async function outgoingRelayTarget(service: ServiceSpec, policy: RelayPolicy): Promise<RelayTarget | null> {
  if (!service.outgoingSmtp) return null;
  const separator = service.outgoingSmtp.lastIndexOf(':');
  const host = service.outgoingSmtp.slice(0, separator);
  const port = Number(service.outgoingSmtp.slice(separator + 1));
  try {
    const address = await checkedRelayAddress(host, { ...policy, allowPrivate: policy.allowPrivate || service.outgoingSmtpAllowPrivate === true });
    return { host, port, address };
  } catch (error) {
    if (!(error instanceof RelayRefused)) throw error;
    throw new DriverError(`${error.message} The relay is checked again at each start and redeploy; set another one with set_outgoing_mail, or none.`,
      false, { cause: error });
  }
}

/** "host:port" with the checked address in place of the name, for a client that resolves nothing itself (the bundled ERP app). */
export function pinnedHostPort(target: RelayTarget): string {
  const host = target.address ?? target.host;
  return `${host.includes(':') ? `[${host}]` : host}:${target.port}`;
}
