// Where webhooks may be sent. https only (http by operator setting), and never to private,
// loopback or link-local addresses unless allowed: checked on the URL when it is saved, and on
// the address actually connected to, after DNS resolution, at every delivery.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1] as string, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface UrlPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export class WebhookRefusal extends Error {}

/** Checks a URL as written; returns the sentence to show when it is refused. */
export function checkWebhookUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookRefusal('The webhook URL is not a valid URL.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new WebhookRefusal('The webhook URL must use https.');
  }
  if (url.username || url.password) throw new WebhookRefusal('The webhook URL must not contain a user name or password.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host)))) {
    throw new WebhookRefusal('The webhook URL points to a private, loopback or link-local address, which is not allowed.');
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Lookup = (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => void;

/** A DNS lookup for the delivery connection that refuses private answers. */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup = dnsLookup as unknown as Lookup): Lookup {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const refused = !allowPrivate ? list.find((entry) => isPrivateAddress(entry.address)) : undefined;
      if (refused) {
        const denial = Object.assign(new Error(`${hostname} resolves to a private address (${refused.address}); delivery refused.`), { code: 'EPRIVATE' });
        return callback(denial, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      return first ? callback(null, first.address, first.family) : callback(Object.assign(new Error(`${hostname} has no address.`), { code: 'ENOTFOUND' }), []);
    });
  };
}
