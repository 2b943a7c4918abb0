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

  it('ends the day at the extreme offsets, UTC+14 and UTC-12, and agrees with the time zone far from the end', () => {
    // Kiritimati (UTC+14): 2026-03-10 ends at 2026-03-10T10:00Z.
    expect(isExpired('2026-03-10', 'Pacific/Kiritimati', new Date('2026-03-10T09:59:59.999Z'))).toBe(false);
    expect(isExpired('2026-03-10', 'Pacific/Kiritimati', new Date('2026-03-10T10:00:00Z'))).toBe(true);
    // Etc/GMT+12 (UTC-12): it ends at 2026-03-11T12:00Z.
    expect(isExpired('2026-03-10', 'Etc/GMT+12', new Date('2026-03-11T11:59:59.999Z'))).toBe(false);
    expect(isExpired('2026-03-10', 'Etc/GMT+12', new Date('2026-03-11T12:00:00Z'))).toBe(true);
    for (const zone of ['UTC', 'Europe/Paris', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Kiritimati', 'Etc/GMT+12']) {
      for (let hours = -72; hours <= 72; hours += 0.5) {
        const now = new Date(Date.parse('2026-03-11T00:00:00Z') + hours * 3600_000);
        expect(isExpired('2026-03-10', zone, now), `${zone} at ${now.toISOString()}`).toBe(dateInTimeZone(now, zone) > '2026-03-10');
      }
    }
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
