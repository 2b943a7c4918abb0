import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPrivateAddress } from '../../src/webhooks/url-safety.js';

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

  it('classifies addresses', () => {
    expect(isPrivateAddress('172.16.5.4')).toBe(true);
    expect(isPrivateAddress('172.32.0.1')).toBe(false);
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('2001:4860:4860::8888')).toBe(false);
    expect(isPrivateAddress('fd00::1')).toBe(true);
  });

  it('refuses credentials in the URL and garbage', () => {
    expect(() => checkWebhookUrl('https://user:pw@hooks.example.com/', strict)).toThrow(/user name or password/);
    expect(() => checkWebhookUrl('not a url', strict)).toThrow('not a valid URL');
  });
});
