import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, guardedLookup, type Lookup } from '../../src/webhooks/url-safety.js';

const strict = { allowHttp: false, allowPrivate: false };

describe('webhook URL safety', () => {
  it('accepts a public https URL', () => {
    expect(checkWebhookUrl('https://hooks.example.com/teaminfra', strict).hostname).toBe('hooks.example.com');
  });

  it('refuses http unless the operator allows it', () => {
    expect(() => checkWebhookUrl('http://hooks.example.com/', strict)).toThrow('The webhook URL must use https.');
    expect(checkWebhookUrl('http://hooks.example.com/', { ...strict, allowHttp: true }).protocol).toBe('http:');
  });

  it('refuses loopback, private and link-local addresses written in the URL', () => {
    for (const url of ['https://127.0.0.1/', 'https://localhost/', 'https://10.1.2.3/', 'https://192.168.1.1/',
      'https://169.254.169.254/latest', 'https://[::1]/', 'https://[fe80::1]/', 'https://[::ffff:127.0.0.1]/', 'https://0.0.0.0/']) {
      expect(() => checkWebhookUrl(url, strict), url).toThrow(/private, loopback or link-local/);
    }
  });

  it('refuses IPv6 URLs that carry a private IPv4 address, and other spellings of loopback', () => {
    for (const url of ['https://[64:ff9b::7f00:1]/', 'https://[64:ff9b::10.0.0.1]/', 'https://[64:ff9b:1::a9fe:a9fe]/',
      'https://[2002:7f00:1::1]/', 'https://[2002:a9fe:a9fe::]/', 'https://[::ffff:7f00:1]/', 'https://[::127.0.0.1]/',
      'https://[::ffff:0:a00:1]/', 'https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', 'https://2130706433/', 'https://0x7f.1/',
      'https://localhost./']) {
      expect(() => checkWebhookUrl(url, strict), url).toThrow(/private, loopback or link-local/);
    }
  });

  it('refuses credentials in the URL and garbage', () => {
    expect(() => checkWebhookUrl('https://user:pw@hooks.example.com/', strict)).toThrow(/user name or password/);
    expect(() => checkWebhookUrl('not a url', strict)).toThrow('not a valid URL');
  });

  it('refuses to connect when DNS answers with an IPv6 address that carries a private IPv4 address', async () => {
    // A name whose AAAA record points through NAT64 at the metadata service.
    const dns: Lookup = (_hostname, _options, callback) => callback(null, [{ address: '64:ff9b::a9fe:a9fe', family: 6 }]);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup(false, dns)('hooks.example.com', {}, resolve));
    expect(error?.code).toBe('EPRIVATE');
  });
});
