// Which IP addresses a webhook may not be sent to: private, loopback, link-local and other
// non-public ranges, in every spelling that reaches one. IPv6 has several forms that carry an
// IPv4 address inside (mapped, compatible, translated, NAT64, 6to4, Teredo); a gateway or the
// kernel turns those into the IPv4 address, so each is judged by the IPv4 address it carries.
import { BlockList, isIP } from 'node:net';
import { builtOnce } from '../core/built-once.js';

// Built on first use: `teaminfra mcp` loads this module with the catalog and checks no address
// before its first answer (0.5 ms of its start).
const privateV4 = builtOnce(() => blockListOf('ipv4', [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
]));

// IPv6 ranges that are not public by themselves (those that embed IPv4 are handled below):
// unique local, link-local, site-local (deprecated), multicast, discard-only, documentation,
// ORCHID, benchmarking, and NAT64's local-use prefix (RFC 8215), whose IPv4 position varies.
const privateV6 = builtOnce(() => blockListOf('ipv6', [
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['100::', 64], ['2001:db8::', 32], ['3fff::', 20],
  ['2001:10::', 28], ['2001:20::', 28], ['2001:2::', 48], ['64:ff9b:1::', 48],
]));

function blockListOf(family: 'ipv4' | 'ipv6', subnets: readonly (readonly [string, number])[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return list;
}

/** True for an address a webhook may not reach (anything that is not an IP address counts as private). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return privateV4().check(address, 'ipv4');
  if (family !== 6) return true;
  const words = ipv6Words(address);
  if (!words) return true;
  const embedded = embeddedIpv4(words);
  if (embedded.length > 0) return embedded.some((ipv4) => privateV4().check(ipv4, 'ipv4'));
  return privateV6().check(words.map((word) => word.toString(16)).join(':'), 'ipv6');
}

/** The IPv4 addresses an IPv6 address carries and would be delivered to; empty when none. */
function embeddedIpv4(words: readonly number[]): string[] {
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words as [number, number, number, number, number, number, number, number];
  const zeroThrough = (last: number) => words.slice(0, last + 1).every((word) => word === 0);
  // ::a.b.c.d (compatible; also :: and ::1), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated, RFC 6145).
  if (zeroThrough(5) || (zeroThrough(4) && w5 === 0xffff) || (zeroThrough(3) && w4 === 0xffff && w5 === 0)) return [ipv4Of(w6, w7)];
  // 64:ff9b::a.b.c.d: NAT64 well-known prefix (RFC 6052).
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return [ipv4Of(w6, w7)];
  // 2002:aabb:ccdd::/48: 6to4 (RFC 3056), the IPv4 address in the second and third words.
  if (w0 === 0x2002) return [ipv4Of(w1, w2)];
  // 2001:0:ssss:ssss:...:cccc:cccc: Teredo (RFC 4380), its server, and its client with every bit inverted.
  if (w0 === 0x2001 && w1 === 0) return [ipv4Of(w2, w3), ipv4Of(~w6 & 0xffff, ~w7 & 0xffff)];
  return [];
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (already checked by isIP), zone id ignored. */
function ipv6Words(address: string): number[] | undefined {
  let text = (address.split('%')[0] as string).toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headWords = head === '' ? [] : head.split(':');
  const tailWords = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headWords.length - tailWords.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const words = [...headWords, ...Array<string>(missing).fill('0'), ...tailWords].map((word) => Number.parseInt(word, 16));
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : undefined;
}
