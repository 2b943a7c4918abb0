// When a schedule's slots fall, in the team's time zone, across daylight-saving changes; and
// which backups grandfather-father-son retention keeps.
import { describe, expect, it } from 'vitest';
import { weekKey } from '../../../src/engine/backup-schedule/local-time.js';
import { keptByGrandfatherFatherSon, nextSlotAfter, TEAM_DEFAULT_SCHEDULE } from '../../../src/engine/backup-schedule/schedule-rules.js';

const at = (text: string) => Date.parse(text);
const iso = (value: number | null) => (value === null ? null : new Date(value).toISOString());
const daily = (time: string) => ({ frequency: 'daily' as const, time_of_day: time });

describe('nextSlotAfter', () => {
  it('is the time of day in the team\'s zone, today if still ahead, else tomorrow', () => {
    expect(iso(nextSlotAfter(daily('03:00'), at('2025-01-10T01:00:00Z'), 'Europe/Paris'))).toBe('2025-01-10T02:00:00.000Z');
    expect(iso(nextSlotAfter(daily('03:00'), at('2025-01-10T02:00:00Z'), 'Europe/Paris'))).toBe('2025-01-11T02:00:00.000Z');
    expect(iso(nextSlotAfter(daily('23:30'), at('2025-01-10T12:00:00Z'), 'Asia/Kolkata'))).toBe('2025-01-10T18:00:00.000Z');
  });

  it('keeps the local time across daylight-saving changes, and runs a skipped time an hour later', () => {
    // Paris moves from UTC+1 to UTC+2 at 02:00 on 30 March 2025, back on 26 October.
    expect(iso(nextSlotAfter(daily('04:00'), at('2025-03-29T12:00:00Z'), 'Europe/Paris'))).toBe('2025-03-30T02:00:00.000Z');
    expect(iso(nextSlotAfter(daily('04:00'), at('2025-10-25T12:00:00Z'), 'Europe/Paris'))).toBe('2025-10-26T03:00:00.000Z');
    expect(iso(nextSlotAfter(daily('02:30'), at('2025-03-29T12:00:00Z'), 'Europe/Paris'))).toBe('2025-03-30T01:30:00.000Z');
  });

  it('runs hourly at the minutes of the time, and never when off', () => {
    expect(iso(nextSlotAfter({ frequency: 'hourly', time_of_day: '07:15' }, at('2025-01-10T10:20:00Z'), 'UTC'))).toBe('2025-01-10T11:15:00.000Z');
    expect(iso(nextSlotAfter({ frequency: 'hourly', time_of_day: '00:15' }, at('2025-01-10T10:00:00Z'), 'Asia/Kathmandu'))).toBe('2025-01-10T10:30:00.000Z');
    expect(nextSlotAfter({ frequency: 'off', time_of_day: '03:00' }, at('2025-01-10T10:00:00Z'), 'UTC')).toBeNull();
  });
});

describe('keptByGrandfatherFatherSon', () => {
  it('numbers weeks the ISO way, Monday first, across a new year', () => {
    expect(weekKey(at('2024-12-30T12:00:00Z'), 'UTC')).toBe('2025-W01');
    expect(weekKey(at('2025-01-05T12:00:00Z'), 'UTC')).toBe('2025-W01');
    expect(weekKey(at('2025-01-06T12:00:00Z'), 'UTC')).toBe('2025-W02');
  });

  it('keeps the newest of each day, week and month counted, in the team\'s zone', () => {
    // Two backups on 1 March (Paris), then one a day to 10 March.
    const backups = [
      { id: 'early', created_at: '2025-03-01T01:00:00.000Z' }, { id: 'late', created_at: '2025-03-01T20:00:00.000Z' },
      ...Array.from({ length: 9 }, (_, i) => ({ id: `d${i + 2}`, created_at: `2025-03-${String(i + 2).padStart(2, '0')}T02:00:00.000Z` })),
      { id: 'feb', created_at: '2025-02-14T02:00:00.000Z' },
    ];
    const kept = keptByGrandfatherFatherSon(backups, { ...TEAM_DEFAULT_SCHEDULE, keep_daily: 3, keep_weekly: 2, keep_monthly: 2 }, 'Europe/Paris', at('2025-03-11T00:00:00Z'));
    // Days: 10, 9, 8 March; weeks: W11 (10 March), W10 (3-9 March: the 9th); months: March (10th), February.
    expect([...kept].sort()).toEqual(['d10', 'd8', 'd9', 'feb'].sort());
    // Day boundaries are the zone's: in Paris the 20:00 UTC backup is the newest of 1 March; in
    // Tokyo it is on 2 March (05:00), before that day's other one, and the early one is 1 March's.
    const everyDay = { ...TEAM_DEFAULT_SCHEDULE, keep_daily: 30, keep_weekly: 0, keep_monthly: 0 };
    const paris = keptByGrandfatherFatherSon(backups, everyDay, 'Europe/Paris', at('2025-03-11T00:00:00Z'));
    expect([paris.has('early'), paris.has('late')]).toEqual([false, true]);
    const tokyo = keptByGrandfatherFatherSon(backups, everyDay, 'Asia/Tokyo', at('2025-03-11T00:00:00Z'));
    expect([tokyo.has('early'), tokyo.has('late')]).toEqual([true, false]);
  });
});
