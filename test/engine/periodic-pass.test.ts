import { afterEach, describe, expect, it, vi } from 'vitest';
import { PeriodicPass } from '../../src/engine/periodic-pass.js';

/** A pass that waits until the test lets it end. */
function heldPasses() {
  const releases: Array<() => void> = [];
  let started = 0;
  const pass = () => new Promise<number>((resolve) => {
    started++;
    releases.push(() => resolve(started));
  });
  return { pass, started: () => started, release: () => releases.shift()?.() };
}

describe('PeriodicPass', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('joins the pass under way when ticked again, and runs a new one after it ends', async () => {
    const held = heldPasses();
    const passes = new PeriodicPass(held.pass, { intervalMs: 0, atStart: true, what: 'testing', onError: () => undefined });
    const first = passes.tick();
    const second = passes.tick();
    expect(held.started()).toBe(1);
    held.release();
    expect(await first).toBe(1);
    expect(await second).toBe(1);
    const third = passes.tick();
    expect(held.started()).toBe(2);
    held.release();
    expect(await third).toBe(2);
  });

  it('tells onError of a failed pass and goes on passing at the interval', async () => {
    vi.useFakeTimers();
    const errors: string[] = [];
    let calls = 0;
    const passes = new PeriodicPass(async () => {
      calls++;
      if (calls === 1) throw new Error('engine gone');
    }, { intervalMs: 1_000, atStart: true, what: 'testing', onError: (error, context) => errors.push(`${context}: ${(error as Error).message}`) });
    passes.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toEqual(['testing: engine gone']);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toBe(3);
    await passes.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toBe(3);
  });

  it('runs no pass at start when atStart is false, and none at all when the interval is 0', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const later = new PeriodicPass(async () => { calls++; }, { intervalMs: 1_000, atStart: false, what: 'testing', onError: () => undefined });
    later.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(1);
    await later.stop();
    const off = new PeriodicPass(async () => { calls++; }, { intervalMs: 0, atStart: true, what: 'testing', onError: () => undefined });
    off.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(1);
  });

  it('waits for the pass under way when stopped, or only its grace when one is given', async () => {
    const held = heldPasses();
    const passes = new PeriodicPass(held.pass, { intervalMs: 0, atStart: true, what: 'testing', onError: () => undefined });
    void passes.tick();
    let stopped = false;
    const stopping = passes.stop().then(() => { stopped = true; });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    held.release();
    await stopping;
    expect(stopped).toBe(true);
    void passes.tick();
    await passes.stop(10);
    expect(held.started()).toBe(2);
    held.release();
  });
});
