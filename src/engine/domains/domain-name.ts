// A domain name a team gives a service, checked before it is stored or handed to the proxy and
// the ACME CA: IDNA (a name in any script becomes its ASCII form, the one DNS, the CA and the
// proxy use), at most 253 characters, labels of 1 to 63 letters, digits and hyphens (none at a
// label's ends), at least two labels, and nothing a team may not claim: no wildcard (it would
// cover other teams' names), no IP address, no single-label or reserved local name.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

export class DomainNameError extends Error {}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** Names no public CA issues for, which would only ever fail. */
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'invalid', 'example', 'home.arpa'];

/** The ASCII form, lower case, without a final dot; a DomainNameError says what is wrong. */
export function checkDomainName(input: string, options: { allowLocal?: boolean } = {}): string {
  const given = input.trim().replace(/\.$/, '');
  if (given.includes('*')) throw new DomainNameError(`"${input}" is a wildcard; give each name on its own.`);
  if (isIP(given.replace(/^\[|\]$/g, '')) !== 0) throw new DomainNameError(`"${input}" is an IP address; give a domain name that points at the server.`);
  const ascii = domainToASCII(given.toLowerCase());
  if (ascii === '') throw new DomainNameError(`"${input}" is not a valid domain name (IDNA refuses it).`);
  if (ascii.length > 253) throw new DomainNameError(`"${input}" is longer than 253 characters.`);
  const labels = ascii.split('.');
  if (labels.length < 2) throw new DomainNameError(`"${input}" has a single label; give a full name such as erp.example.com.`);
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    throw new DomainNameError(`"${input}" has a label "${bad}" that is not 1 to 63 letters, digits or inner hyphens.`);
  }
  if (!options.allowLocal && LOCAL_SUFFIXES.some((suffix) => ascii === suffix || ascii.endsWith(`.${suffix}`))) {
    throw new DomainNameError(`"${input}" is a local or reserved name no certificate authority issues for.`);
  }
  return ascii;
}
