// Where webhooks may be sent. https only (http by operator setting), and never to private,
// loopback or link-local addresses unless allowed (private-address.ts says which, in every
// spelling): checked on the URL when it is saved, and on the address actually connected to,
// after DNS resolution, at every delivery.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { isPrivateAddress } from './private-address.js';

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
  // "localhost." is localhost too: a trailing dot only makes the name absolute.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
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
