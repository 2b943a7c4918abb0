import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signedHeaders, verifyWebhook, WebhookVerificationError } from '../../src/webhooks/signing.js';

const body = JSON.stringify({ type: 'service.started', timestamp: '2026-11-22T00:00:00Z', data: { service: { id: 'svc_1' } } });

describe('verifyWebhook', () => {
  const secret = generateWebhookSecret();
  const now = 1_800_000_000;

  it('accepts a delivery signed with the secret and returns the event', () => {
    const headers = signedHeaders([secret], 'evt_1', now, body);
    expect(verifyWebhook(secret, headers, body, now)).toMatchObject({ type: 'service.started' });
  });

  it('refuses a tampered body', () => {
    const headers = signedHeaders([secret], 'evt_1', now, body);
    expect(() => verifyWebhook(secret, headers, body.replace('svc_1', 'svc_2'), now)).toThrow(WebhookVerificationError);
  });

  it('refuses a timestamp older than five minutes, and one from the future', () => {
    const headers = signedHeaders([secret], 'evt_1', now - 301, body);
    expect(() => verifyWebhook(secret, headers, body, now)).toThrow('Timestamp outside the tolerance.');
    expect(() => verifyWebhook(secret, signedHeaders([secret], 'evt_1', now + 301, body), body, now)).toThrow(/tolerance/);
    expect(verifyWebhook(secret, signedHeaders([secret], 'evt_1', now - 299, body), body, now)).toBeTruthy();
  });

  it('refuses another secret and a changed id', () => {
    const headers = signedHeaders([secret], 'evt_1', now, body);
    expect(() => verifyWebhook(generateWebhookSecret(), headers, body, now)).toThrow('No matching signature.');
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'evt_2' }, body, now)).toThrow('No matching signature.');
  });

  it('verifies with either secret during a rotation, when both signatures are sent', () => {
    const next = generateWebhookSecret();
    const headers = signedHeaders([next, secret], 'evt_1', now, body);
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifyWebhook(secret, headers, body, now)).toBeTruthy();
    expect(verifyWebhook(next, headers, body, now)).toBeTruthy();
  });

  it('reads headers from a fetch Headers object too', () => {
    const headers = new Headers(signedHeaders([secret], 'evt_1', now, body));
    expect(verifyWebhook(secret, headers, Buffer.from(body), now)).toBeTruthy();
  });
});
