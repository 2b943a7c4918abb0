// An audit row's id carries the millisecond of its `at`: the activity trail's since/until bound
// the id, so the two must never disagree (CI once saw an entry's id a millisecond older than its time).
import { describe, expect, it } from 'vitest';
import { auditStamp } from '../../src/core/audit.js';
import { auditIdAt } from '../../src/db/repositories/activity.js';

const millisOf = (id: string) => parseInt(id.slice('aud_'.length, 'aud_'.length + 9), 36);

describe('auditStamp', () => {
  it('gives an id whose millisecond is the time it answers, over many clock ticks', () => {
    const deadline = Date.now() + 50;
    let stamps = 0;
    while (Date.now() < deadline) {
      const stamp = auditStamp();
      expect(millisOf(stamp.id)).toBe(Date.parse(stamp.at));
      stamps += 1;
    }
    expect(stamps).toBeGreaterThan(10);
  });

  it('puts an entry at its own time inside since=at and outside until=at', () => {
    const stamp = auditStamp('2026-11-25T10:00:00.123Z');
    expect(stamp.at).toBe('2026-11-25T10:00:00.123Z');
    expect(stamp.id >= auditIdAt(stamp.at)).toBe(true);
    expect(stamp.id < auditIdAt('2026-11-25T10:00:00.124Z')).toBe(true);
  });
});
