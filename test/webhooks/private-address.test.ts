// Which addresses a webhook may not reach, in every spelling that reaches one.
import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/webhooks/private-address.js';

describe('isPrivateAddress', () => {
  it('classifies IPv4 and plain IPv6 addresses', () => {
    expect(isPrivateAddress('172.16.5.4')).toBe(true);
    expect(isPrivateAddress('172.32.0.1')).toBe(false);
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('2001:4860:4860::8888')).toBe(false);
    expect(isPrivateAddress('fd00::1')).toBe(true);
    expect(isPrivateAddress('fe80::1%eth0')).toBe(true);
    expect(isPrivateAddress('::')).toBe(true);
    expect(isPrivateAddress('::1')).toBe(true);
    expect(isPrivateAddress('not an address')).toBe(true);
  });

  it('is private when an IPv6 address carries a private IPv4 address', () => {
    for (const address of [
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', // IPv4-mapped
      '::127.0.0.1', '::a9fe:a9fe', // IPv4-compatible (deprecated)
      '::ffff:0:192.168.0.1', // IPv4-translated (SIIT)
      '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::c0a8:1', // NAT64 well-known prefix
      '2002:7f00:1::', '2002:c0a8:101:1::1', // 6to4
      '2001:0:4136:e378:8000:63bf:f5ff:fffe', // Teredo, client 10.0.0.1
      '2001:0:a00:1::1', // Teredo, server 10.0.0.1
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('is private for NAT64 local-use, documentation, discard and site-local ranges', () => {
    for (const address of ['64:ff9b:1::8.8.8.8', '64:ff9b:1:ffff::1', '2001:db8::1', '3fff::1', '100::1', 'fec0::1', 'ff02::1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('is public when the embedded IPv4 address is public', () => {
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });
});
