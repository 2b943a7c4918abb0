// Where this server may send a request of its own: webhooks, and the sign-in server fetching a
// client's metadata document (src/oauth/client-metadata-documents.ts). https only (http by
// operator setting), and never to private, loopback or link-local addresses unless allowed
// (private-address.ts says which, in every spelling): checked on the URL as written, and on the
// address actually connected to, after DNS resolution (guardedLookup), at every request.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { isPrivateAddress } from './private-address.js';

export interface UrlPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** A URL this server will not send a request to; the message is the sentence to show. */
export class UnsafeUrl extends Error {}

export class WebhookRefusal extends Error {}

/** Checks a URL as written; `subject` names it in the sentence ("The webhook URL"). */
export function checkOutboundUrl(raw: string, policy: UrlPolicy, subject: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrl(`${subject} is not a valid URL.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new UnsafeUrl(`${subject} must use https.`);
  }
  if (url.username || url.password) throw new UnsafeUrl(`${subject} must not contain a user name or password.`);
  // "localhost." is localhost too: a trailing dot only makes the name absolute.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (!policy.allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host)))) {
    throw new UnsafeUrl(`${subject} points to a private, loopback or link-local address, which is not allowed.`);
  }
  return url;
}

export function checkWebhookUrl(raw: string, policy: UrlPolicy): URL {
  try {
    return checkOutboundUrl(raw, policy, 'The webhook URL');
  } catch (error) {
    throw error instanceof UnsafeUrl ? new WebhookRefusal(error.message) : error;
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Lookup = (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => void;

/** A DNS lookup for an outgoing connection that refuses private answers (error code EPRIVATE). */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup = dnsLookup as unknown as Lookup): Lookup {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const refused = !allowPrivate ? list.find((entry) => isPrivateAddress(entry.address)) : undefined;
      if (refused) {
        const denial = Object.assign(new Error(`${hostname} resolves to a private address (${refused.address}); refused.`), { code: 'EPRIVATE' });
        return callback(denial, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      return first ? callback(null, first.address, first.family) : callback(Object.assign(new Error(`${hostname} has no address.`), { code: 'ENOTFOUND' }), []);
    });
  };
}
