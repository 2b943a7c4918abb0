// The DNS-rebinding guard of /mcp: which Host and Origin values are ours.
import { describe, expect, it } from 'vitest';
import { hostPolicyOf, hostRefusal, parseHost } from '../../src/mcp/allowed-hosts.js';

const none = hostPolicyOf([], undefined);

describe('hostRefusal', () => {
  it('accepts loopback names with any port', () => {
    for (const host of ['localhost', 'localhost:8080', '127.0.0.1:3000', '[::1]:8080']) {
      expect(hostRefusal(none, host, undefined, '127.0.0.1'), host).toBeUndefined();
    }
  });

  it('refuses a name that is not ours, as a rebound DNS name would be', () => {
    expect(hostRefusal(none, 'evil.example:8080', undefined, '127.0.0.1')).toContain('"evil.example:8080"');
    expect(hostRefusal(none, 'localhost.evil.example', undefined, '127.0.0.1')).toBeDefined();
  });

  it('refuses a request without a Host header, or with an empty one', () => {
    expect(hostRefusal(none, undefined, undefined, '127.0.0.1')).toBeDefined();
    expect(hostRefusal(none, '', undefined, '127.0.0.1')).toBeDefined();
  });

  it('refuses Host values a lenient URL parser would read as loopback', () => {
    for (const host of ['2130706433', '2130706433:8080', '0x7f.0.0.1', '127.1', '0177.0.0.1', 'evil.example@localhost',
      'evil.example@localhost:8080', 'localhost:8080@evil.example', 'localhost/evil', 'localhost:0', 'localhost:99999',
      'localhost:', ' localhost', 'local host', '[::1', '[127.0.0.1]', 'localhost\\evil.example']) {
      expect(hostRefusal(none, host, undefined, '127.0.0.1'), host).toBeDefined();
    }
  });

  it('refuses an Origin that is not exactly scheme://host[:port] of ours', () => {
    for (const origin of ['http://2130706433', 'http://evil.example@localhost', 'http://localhost/path', 'ftp://localhost', '']) {
      expect(hostRefusal(none, 'localhost', origin, '127.0.0.1'), origin).toBeDefined();
    }
  });

  it('accepts the IP address the connection arrived on, which cannot be rebound', () => {
    expect(hostRefusal(none, '192.168.1.5:8080', undefined, '::ffff:192.168.1.5')).toBeUndefined();
    expect(hostRefusal(none, '192.168.1.6:8080', undefined, '::ffff:192.168.1.5')).toBeDefined();
  });

  it('accepts configured names, from the options or else TEAMINFRA_ALLOWED_HOSTS', () => {
    expect(hostRefusal(hostPolicyOf(['Infra.Example.com']), 'infra.example.com', undefined, '10.0.0.1')).toBeUndefined();
    expect(hostRefusal(hostPolicyOf(undefined, 'a.example, b.example'), 'b.example:443', undefined, '10.0.0.1')).toBeUndefined();
    expect(hostRefusal(hostPolicyOf(undefined, 'a.example'), 'c.example', undefined, '10.0.0.1')).toBeDefined();
  });

  it('refuses an Origin from another site even when the Host is ours', () => {
    expect(hostRefusal(none, 'localhost:8080', 'https://evil.example', '127.0.0.1')).toContain('https://evil.example');
    expect(hostRefusal(none, 'localhost:8080', 'null', '127.0.0.1')).toBeDefined();
    expect(hostRefusal(none, 'localhost:8080', 'http://localhost:5173', '127.0.0.1')).toBeUndefined();
  });
});

describe('parseHost', () => {
  it('reads a name, an IPv4 address or a bracketed IPv6 address, each with an optional port', () => {
    expect(parseHost('Infra.Example.com:443')).toEqual({ kind: 'name', hostname: 'infra.example.com', port: 443 });
    expect(parseHost('localhost.')).toEqual({ kind: 'name', hostname: 'localhost' });
    expect(parseHost('10.0.0.1')).toEqual({ kind: 'ipv4', hostname: '10.0.0.1' });
    expect(parseHost('[::1]:8080')).toEqual({ kind: 'ipv6', hostname: '::1', port: 8080 });
  });

  it('accepts another spelling of the IPv6 loopback address', () => {
    expect(hostRefusal(none, '[0:0:0:0:0:0:0:1]:8080', undefined, '127.0.0.1')).toBeUndefined();
  });
});
