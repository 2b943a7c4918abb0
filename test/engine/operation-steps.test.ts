// An operation's step log stays small whatever the operation does, and shows a failure's own
// sentence but never an internal error's text.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DriverError, type ServiceDriver, type ServiceSpec, type StartHooks } from '../../src/engine/driver.js';
import { DriverRouter } from '../../src/engine/driver-router.js';
import { MAX_STEPS, StepLog } from '../../src/engine/operation-steps.js';
import { reportStepProgress } from '../../src/engine/step-progress.js';

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

  it('shows what a driver call reports on its way as one step, replaced at each report, after the call that holds it', async () => {
    const log = new StepLog();
    const saved: string[] = [];
    const recorded = new StepLog((steps) => saved.push(steps)).recording({
      async provision() {
        reportStepProgress('pull:erp:1', 'Pulling erp:1 from registry.example.com', null);
        await new Promise((resolve) => setTimeout(resolve, 5));
        reportStepProgress('pull:erp:1', 'Pulling erp:1 from registry.example.com', '45 MB of 120 MB');
        reportStepProgress('pull:erp:1', 'Pulled erp:1 from registry.example.com', '120 MB of 120 MB');
      },
    } as never);
    await (recorded as unknown as { provision(): Promise<void> }).provision();
    const steps = JSON.parse(saved.at(-1)!) as { step: string; detail: string | null; duration_ms: number }[];
    expect(steps.map((step) => [step.step, step.detail])).toEqual([
      ["Prepared the service's files and data", null], ['Pulled erp:1 from registry.example.com', '120 MB of 120 MB'],
    ]);
    expect(steps[1]!.duration_ms).toBeGreaterThanOrEqual(4);
    expect(saved.some((each) => each.includes('45 MB of 120 MB'))).toBe(true);
    // Outside a driver call of an operation, a report goes nowhere.
    reportStepProgress('pull:erp:1', 'Pulling erp:1 from registry.example.com', null);
    expect(log.steps).toEqual([]);
  });

  afterEach(() => { vi.useRealTimers(); });

  it('records each part of a start the driver times as a step of its own, in the order they began even within one millisecond, a failed one with its reason redacted as the whole call is', async () => {
    // The clock stands still: every step begins at the same millisecond, as a fast start's often do.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-28T12:00:00.000Z') });
    const secret = 'generated-db-password-0123456789';
    class MigrateFailed extends DriverError {}
    let driverCaught: unknown;
    // An app's driver as the Docker one times a start: the database's health, then the migration, which fails quoting a secret.
    const app = {
      name: 'app',
      secretValuesOf: async () => [secret],
      start: async (_service: ServiceSpec, hooks: StartHooks) => {
        await hooks.timed!('Waited for the database container to be healthy', async () => undefined);
        try {
          return await hooks.timed!("Ran the app's migrate command", async () => { throw new MigrateFailed(`It failed; its last output was "login ${secret}"`); });
        } catch (error) {
          driverCaught = error;
          throw new DriverError(`${(error as DriverError).reason}, so the service was not started.`);
        }
      },
    } as unknown as ServiceDriver;
    const service = { id: 'svc_a', name: 'A', revision: 1, port: null, pid: null, outgoingSmtp: null, parentId: null, app: 'x',
      server: { id: 'srv_a', rootDir: null, docker: { host: 'unix:///nowhere', image: null } } } satisfies ServiceSpec;
    const log = new StepLog();
    const hooks = { portAssigned: async () => undefined, spawned: async () => undefined };
    await expect(log.recording(new DriverRouter(app, app)).start(service, hooks)).rejects.toThrow();
    const steps = JSON.parse(log.serialized()) as { step: string; outcome: string; detail: string | null }[];
    expect(steps.map((step) => [step.step, step.outcome, step.detail])).toEqual([
      ['Started the service', 'failed', 'It failed; its last output was "login [redacted]", so the service was not started.'],
      ['Waited for the database container to be healthy', 'done', null],
      ["Ran the app's migrate command", 'failed', 'It failed; its last output was "login [redacted]"'],
    ]);
    // The driver itself still told its own failure apart.
    expect(driverCaught).toBeInstanceOf(MigrateFailed);
  });
});
