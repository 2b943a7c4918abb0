// SessionTurns: at most TURNS_PER_SESSION requests of one session run at once, the others wait
// in order, and one session's queue never holds up another's.
import { describe, expect, it } from 'vitest';
import { SessionTurns, TURNS_PER_SESSION } from '../../src/panel/session-turns.js';

/** Whether a promise has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => { done = true; });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('SessionTurns', () => {
  it('lets TURNS_PER_SESSION requests of a session run, makes the next wait until one ends, and gives turns in order', async () => {
    const turns = new SessionTurns();
    const running = await Promise.all(Array.from({ length: TURNS_PER_SESSION }, () => turns.take('busy')));
    const next = turns.take('busy');
    const after = turns.take('busy');
    expect(await settled(next)).toBe(false);
    running[0]!();
    expect(await settled(next)).toBe(true);
    expect(await settled(after)).toBe(false);
    expect(turns.runningOf('busy')).toBe(TURNS_PER_SESSION);
    running[1]!();
    expect(await settled(after)).toBe(true);
  });

  it('answers another session at once while one session waits for its turns', async () => {
    const turns = new SessionTurns();
    await Promise.all(Array.from({ length: TURNS_PER_SESSION }, () => turns.take('busy')));
    expect(await settled(turns.take('busy'))).toBe(false);
    expect(await settled(turns.take('neighbour'))).toBe(true);
  });

  it('frees a turn once however often its release is called, and forgets a session with nothing running', async () => {
    const turns = new SessionTurns(1);
    const release = await turns.take('s');
    const next = turns.take('s');
    release();
    release();
    const third = turns.take('s');
    expect(await settled(next)).toBe(true);
    expect(await settled(third)).toBe(false);
    (await next)();
    (await third)();
    expect(turns.runningOf('s')).toBe(0);
  });
});
