// An operation's step-by-step log: each call it makes to the driver (prepare, start, stop, back
// up...) and each moment the driver reports on the way (a port chosen, the process up, the safety
// backup taken), with when it began, how long it took, and how it ended. A failed step carries
// the driver's own sentence (already free of secrets: driver-router.ts), never an internal error's
// text. Bounded: at most MAX_STEPS steps of at most MAX_DETAIL characters each, so a row stays small.
// Kept while the operation runs (a client polling it sees them) and with its end; an attempt
// interrupted by a crash leaves what it had written, and the attempt that resumes it starts over.
import { DriverError, type ServiceDriver } from './driver.js';
import { withStepProgress, type StepProgress } from './step-progress.js';

export interface OperationStep {
  step: string;
  at: string;
  duration_ms: number;
  outcome: 'done' | 'failed';
  detail: string | null;
}

export const MAX_STEPS = 40;
const MAX_DETAIL = 500;

/** What each driver call does, in words; a call not named here is not a step. */
const DRIVER_STEPS: Partial<Record<keyof ServiceDriver, string>> = {
  provisionServer: 'Prepared the server',
  provision: "Prepared the service's files and data",
  start: 'Started the service',
  stop: 'Stopped the service',
  redeploy: 'Replaced the running revision',
  status: 'Checked what runs',
  destroy: 'Removed the service and its data',
  storeMailCredentials: 'Kept the outgoing-mail credentials',
  backup: 'Wrote the backup',
  restore: 'Restored the backup',
  copy: "Copied the data into the copy",
};

/** The moments a driver reports through the hooks it is given. */
const HOOK_STEPS: Record<string, (value: unknown) => string> = {
  portAssigned: (port) => `Chose port ${String(port)}`,
  spawned: () => 'The process was created',
  beforeSwap: () => 'Took the safety backup',
};

export class StepLog implements StepProgress {
  readonly steps: OperationStep[] = [];
  private left = 0;
  /** Each step reported by progress() as it was placed, to replace it at its next report. */
  private readonly progressed = new Map<string, OperationStep>();
  /** The steps reported during a driver call (its hooks', its progress), and how many calls are under way. */
  private readonly reported = new WeakSet<OperationStep>();
  private calls = 0;

  /** `onChange`: told after each step (to keep the steps so far). */
  constructor(private readonly onChange: (steps: string) => void = () => undefined) {}

  note(step: string, detail: string | null = null): void {
    this.push({ step, at: new Date().toISOString(), duration_ms: 0, outcome: 'done', detail });
  }

  async time<T>(step: string, work: () => Promise<T>, detailOf: (value: T) => string | null = () => null): Promise<T> {
    const started = Date.now();
    const at = new Date(started).toISOString();
    try {
      const value = await work();
      this.push({ step, at, duration_ms: Date.now() - started, outcome: 'done', detail: detailOf(value) });
      return value;
    } catch (error) {
      const detail = error instanceof DriverError ? error.reason : 'An internal error; it has been logged.';
      this.push({ step, at, duration_ms: Date.now() - started, outcome: 'failed', detail });
      throw error;
    }
  }

  progress(key: string, step: string, detail: string | null, outcome: 'done' | 'failed' = 'done'): void {
    const placed = this.progressed.get(key);
    const index = placed ? this.steps.indexOf(placed) : -1;
    if (!placed || index === -1) {
      this.progressed.set(key, this.push({ step, at: new Date().toISOString(), duration_ms: 0, outcome, detail }));
      return;
    }
    const overflow = index === MAX_STEPS - 1 && this.left > 0;
    const next = bounded({
      step: overflow ? `${this.left} more step(s), the last: ${step}` : step, at: placed.at, duration_ms: Date.now() - Date.parse(placed.at), outcome, detail,
    });
    this.steps[index] = next;
    this.progressed.set(key, next);
    this.reported.add(next);
    this.onChange(this.serialized());
  }

  /**
   * The steps as stored: JSON of the bounded list, in the order they began, so that the moments
   * reported during a call (a port chosen while starting) follow the call that holds them.
   */
  serialized(): string {
    // Begun in the same millisecond: a driver call before what it reported on its way.
    const order = (step: OperationStep) => (this.reported.has(step) ? 1 : 0);
    return JSON.stringify([...this.steps].sort((a, b) => a.at.localeCompare(b.at) || order(a) - order(b)));
  }

  /** `driver` with each of its calls recorded as a step (and the moments its hooks report). */
  recording(driver: ServiceDriver): ServiceDriver {
    return new Proxy(driver, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        const step = DRIVER_STEPS[property as keyof ServiceDriver];
        if (!step) return value.bind(target);
        return (...args: unknown[]) => this.time(step, async () => {
          this.calls++;
          try {
            return await withStepProgress(this, () => value.apply(target, args.map((arg) => this.hooksRecorded(arg))));
          } finally {
            this.calls--;
          }
        }, detailOfResult);
      },
    });
  }

  private hooksRecorded(arg: unknown): unknown {
    if (typeof arg !== 'object' || arg === null || !Object.keys(HOOK_STEPS).some((name) => typeof (arg as Record<string, unknown>)[name] === 'function')) return arg;
    const wrapped: Record<string, unknown> = { ...(arg as Record<string, unknown>) };
    for (const [name, describe] of Object.entries(HOOK_STEPS)) {
      const hook = wrapped[name];
      if (typeof hook !== 'function') continue;
      wrapped[name] = (value: unknown) => this.time(describe(value), () => Promise.resolve(hook.call(arg, value)));
    }
    return wrapped;
  }

  /** Returns the step as placed. */
  private push(step: OperationStep): OperationStep {
    let placed = bounded(step);
    if (this.steps.length < MAX_STEPS - 1) this.steps.push(placed);
    else {
      // The last place says how many more there were.
      this.left++;
      placed = { ...placed, step: `${this.left} more step(s), the last: ${placed.step}` };
      this.steps[MAX_STEPS - 1] = placed;
    }
    if (this.calls > 0) this.reported.add(placed);
    this.onChange(this.serialized());
    return placed;
  }
}

function bounded(step: OperationStep): OperationStep {
  return { ...step, detail: step.detail && step.detail.length > MAX_DETAIL ? `${step.detail.slice(0, MAX_DETAIL - 1)}…` : step.detail };
}

/** What a driver call gave back, in words where it says something a reader wants (the revision and port it runs on). */
function detailOfResult(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const running = value as { revision?: unknown; port?: unknown; state?: unknown; sizeBytes?: unknown };
  if (typeof running.revision === 'number' && typeof running.port === 'number') return `revision ${running.revision} on port ${running.port}`;
  if (typeof running.state === 'string') return running.state;
  if (typeof running.sizeBytes === 'number') return `${running.sizeBytes} bytes`;
  return null;
}
