import { describe, expect, it } from 'vitest';
import { dateInTimeZone, isExpired, isValidDate } from '../../src/auth/expiry.js';

describe('token expiry', () => {
  it('never expires without a date', () => {
    expect(isExpired(null, 'UTC', new Date('2100-01-01T00:00:00Z'))).toBe(false);
  });

  it('works until the last second of the chosen day in UTC', () => {
    expect(isExpired('2026-03-10', 'UTC', new Date('2026-03-10T23:59:59.999Z'))).toBe(false);
    expect(isExpired('2026-03-10', 'UTC', new Date('2026-03-11T00:00:00.000Z'))).toBe(true);
  });

  it('ends the day in the team time zone, not in UTC', () => {
    // 2026-03-10 ends at 2026-03-10T23:00Z in Brussels (UTC+1 in March before DST).
    expect(isExpired('2026-03-10', 'Europe/Brussels', new Date('2026-03-10T22:59:59Z'))).toBe(false);
    expect(isExpired('2026-03-10', 'Europe/Brussels', new Date('2026-03-10T23:00:00Z'))).toBe(true);
    // In Los Angeles (UTC-7 in DST) the same day lasts until 2026-03-11T07:00Z.
    expect(isExpired('2026-03-10', 'America/Los_Angeles', new Date('2026-03-11T06:59:59Z'))).toBe(false);
    expect(isExpired('2026-03-10', 'America/Los_Angeles', new Date('2026-03-11T07:00:00Z'))).toBe(true);
  });

  it('reads the date in a time zone', () => {
    expect(dateInTimeZone(new Date('2026-01-01T12:00:00Z'), 'Pacific/Kiritimati')).toBe('2026-01-02');
  });

  it('accepts only real calendar dates', () => {
    expect(isValidDate('2026-02-28')).toBe(true);
    expect(isValidDate('2026-02-30')).toBe(false);
    expect(isValidDate('26-2-3')).toBe(false);
  });
});
