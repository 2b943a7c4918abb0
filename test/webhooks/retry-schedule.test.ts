import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_DELAYS_MS, nextDelayMs, parseRetryAfter } from '../../src/webhooks/retry-schedule.js';

describe('retry schedule', () => {
  it('spreads retries over about three days, growing', () => {
    const total = DEFAULT_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total / 3600_000).toBeGreaterThan(48);
    expect(total / 3600_000).toBeLessThan(80);
    for (let index = 1; index < DEFAULT_RETRY_DELAYS_MS.length; index += 1) {
      expect(DEFAULT_RETRY_DELAYS_MS[index]).toBeGreaterThanOrEqual(DEFAULT_RETRY_DELAYS_MS[index - 1] as number);
    }
  });

  it('adds at most 10% jitter either way and stops when exhausted', () => {
    expect(nextDelayMs(1, [1000], undefined, () => 0)).toBe(900);
    expect(nextDelayMs(1, [1000], undefined, () => 1)).toBe(1100);
    expect(nextDelayMs(2, [1000], undefined)).toBeNull();
  });

  it('honours a longer Retry-After, capped at a day', () => {
    expect(nextDelayMs(1, [1000], 120, () => 0.5)).toBe(120_000);
    expect(nextDelayMs(1, [1000], 10 * 86_400, () => 0.5)).toBe(86_400_000);
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(parseRetryAfter('30')).toBe(30);
    expect(parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(55);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
