// Where a production service's mail relay is connected to. A team names the relay; a name
// checked when it is set and resolved again at each send can lead anywhere by then (DNS
// rebinding). So at every start or redeploy the name is resolved once, every address it gives is
// checked against the private ranges (src/webhooks/private-address.ts, as webhooks are), and the
// service is given the checked address to connect to: every connection it makes goes there,
// never to a fresh answer. The drivers pin it (src/engine/outgoing-relay-target.ts): the local
// ERP process gets the address, a container the name mapped to it in its /etc/hosts, so that a
// client that checks the relay's TLS certificate still does so against the name.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPrivateAddress } from '../webhooks/private-address.js';

/** Every address a name resolves to (dns.lookup with all: true); injectable so that tests can make a name lead elsewhere. */
export type AddressLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: AddressLookup = (hostname) => dnsLookup(hostname, { all: true });

/** How relay hosts are judged: private addresses allowed (the operator's choice), and how names are resolved. */
export interface RelayPolicy {
  allowPrivate: boolean;
  lookup?: AddressLookup;
}

/** A relay host a service may not connect to; the message is the sentence to show. */
export class RelayRefused extends Error {}

const PRIVATE_SENTENCE = 'The relay host is a private, loopback or link-local address, which is not allowed; the operator can allow it.';

/** The host as written, without IPv6 brackets or the trailing dot of an absolute name, in lower case. */
export function bareRelayHost(host: string): string {
  return host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/**
 * The address to connect to for `host`: an IP address as written, or the first address its name
 * resolves to now, once each is checked. Throws RelayRefused. Null only when private addresses
 * are allowed and the name does not resolve here: it is then used as it is (it may be one only
 * the service's own network knows).
 */
export async function checkedRelayAddress(host: string, policy: RelayPolicy): Promise<string | null> {
  const bare = bareRelayHost(host);
  if (!/^[a-z0-9.:-]+$/.test(bare) || bare.length > 253) throw new RelayRefused(`The relay host "${host}" is not a host name or an IP address.`);
  if (isIP(bare) !== 0) {
    if (!policy.allowPrivate && isPrivateAddress(bare)) throw new RelayRefused(PRIVATE_SENTENCE);
    return bare;
  }
  if (!policy.allowPrivate && (bare === 'localhost' || bare.endsWith('.localhost'))) throw new RelayRefused(PRIVATE_SENTENCE);
  let addresses: { address: string }[];
  try {
    addresses = await (policy.lookup ?? systemLookup)(bare);
  } catch {
    addresses = [];
  }
  if (policy.allowPrivate) return addresses[0]?.address ?? null;
  if (addresses.length === 0) throw new RelayRefused(`The relay host ${bare} does not resolve to an address.`);
  // Every answer, not only the one used: a client other than ours may pick any of them.
  if (addresses.some((entry) => isPrivateAddress(entry.address))) {
    throw new RelayRefused(`The relay host ${bare} resolves to a private, loopback or link-local address, which is not allowed; the operator can allow it.`);
  }
  return (addresses[0] as { address: string }).address;
}
