// An operation's step log stays small whatever the operation does, and shows a failure's own
// sentence but never an internal error's text.
import { describe, expect, it } from 'vitest';
import { DriverError } from '../../src/engine/driver.js';
import { MAX_STEPS, StepLog } from '../../src/engine/operation-steps.js';

describe('StepLog', () => {
  it('keeps at most MAX_STEPS steps, the last saying how many more there were, and cuts a long detail', () => {
    const log = new StepLog();
    for (let index = 0; index < 100; index++) log.note(`step ${index}`, 'x'.repeat(2_000));
    const steps = JSON.parse(log.serialized()) as { step: string; detail: string }[];
    expect(steps).toHaveLength(MAX_STEPS);
    expect(steps.at(-1)?.step).toBe(`${100 - MAX_STEPS + 1} more step(s), the last: step 99`);
    expect(steps[0]?.detail).toHaveLength(500);
    expect(log.serialized().length).toBeLessThan(30_000);
  });

  it('records a driver\'s failure with its reason, and any other error without its text', async () => {
    const log = new StepLog();
    await expect(log.time('Started the service', async () => { throw new DriverError('Port 80 is taken.'); })).rejects.toThrow();
    await expect(log.time('Stopped the service', async () => { throw new Error('secret internal detail'); })).rejects.toThrow();
    expect(log.steps.map((step) => [step.outcome, step.detail])).toEqual([
      ['failed', 'Port 80 is taken.'], ['failed', 'An internal error; it has been logged.'],
    ]);
  });
});
