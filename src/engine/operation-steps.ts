// An operation's step-by-step log: each call it makes to the driver (prepare, start, stop, back
// up...), each moment the driver reports on the way (a port chosen, the process up, the safety
// backup taken) and each part of a start it times itself (an app's database health wait, its
// migration, its web container's health wait), with when it began, how long it took, and how it
// ended. A failed step carries the driver's own sentence (already free of secrets:
// driver-router.ts), never an internal error's text. Bounded: at most MAX_STEPS steps of at most
// MAX_DETAIL characters each, so a row stays small. Kept while the operation runs (a client
// polling it sees them) and with its end; an attempt interrupted by a crash leaves what it had
// written, and the attempt that resumes it starts over.
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
export const DRIVER_STEPS: Partial<Record<keyof ServiceDriver, string>> = {
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
  transferData: 'Copied the data to the other server',
  removeFromServer: 'Removed what the service left on the server',
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
  /** When each step began, counted: a step and the parts inside it often begin within the same millisecond. */
  private begun = 0;
  private readonly beganAs = new WeakMap<OperationStep, number>();
  /** Each step reported by progress() as it was placed, to replace it at its next report. */
  private readonly progressed = new Map<string, OperationStep>();

  /** `onChange`: told after each step (to keep the steps so far). */
  constructor(private readonly onChange: (steps: string) => void = () => undefined) {}

  note(step: string, detail: string | null = null): void {
    this.push({ step, at: new Date().toISOString(), duration_ms: 0, outcome: 'done', detail }, this.begun++);
  }

  async time<T>(step: string, work: () => Promise<T>, detailOf: (value: T) => string | null = () => null): Promise<T> {
    const began = this.begun++;
    const started = Date.now();
    const at = new Date(started).toISOString();
    try {
      const value = await work();
      this.push({ step, at, duration_ms: Date.now() - started, outcome: 'done', detail: detailOf(value) }, began);
      return value;
    } catch (error) {
      const detail = error instanceof DriverError ? error.reason : 'An internal error; it has been logged.';
      this.push({ step, at, duration_ms: Date.now() - started, outcome: 'failed', detail }, began);
      throw error;
    }
  }

  progress(key: string, step: string, detail: string | null, outcome: 'done' | 'failed' = 'done'): void {
    const placed = this.progressed.get(key);
    const index = placed ? this.steps.indexOf(placed) : -1;
    if (!placed || index === -1) {
      this.progressed.set(key, this.push({ step, at: new Date().toISOString(), duration_ms: 0, outcome, detail }, this.begun++));
      return;
    }
    const overflow = index === MAX_STEPS - 1 && this.left > 0;
    const next = bounded({
      step: overflow ? `${this.left} more step(s), the last: ${step}` : step, at: placed.at, duration_ms: Date.now() - Date.parse(placed.at), outcome, detail,
    });
    this.steps[index] = next;
    this.beganAs.set(next, this.beganAs.get(placed) ?? 0);
    this.progressed.set(key, next);
    this.onChange(this.serialized());
  }

  /**
   * The steps as stored: JSON of the bounded list, in the order they began, so that the moments
   * reported during a call (a port chosen while starting, an image pulled) and the parts it times
   * follow the call that holds them, even within the same millisecond.
   */
  serialized(): string {
    const began = (step: OperationStep) => this.beganAs.get(step) ?? 0;
    return JSON.stringify([...this.steps].sort((a, b) => began(a) - began(b)));
  }

  /** `driver` with each of its calls recorded as a step (and the moments its hooks report). */
  recording(driver: ServiceDriver): ServiceDriver {
    return new Proxy(driver, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        const step = DRIVER_STEPS[property as keyof ServiceDriver];
        if (!step) return value.bind(target);
        return (...args: unknown[]) => this.time(step, () => withStepProgress(this, () => value.apply(target, args.map((arg) => this.hooksRecorded(arg)))),
          detailOfResult);
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
    // The parts of a start the driver names itself (StartHooks.timed), each a step of its own.
    wrapped.timed = <T>(step: string, work: () => Promise<T>, detail?: string) => this.time(step, work, () => detail ?? null);
    return wrapped;
  }

  /** Returns the step as placed. */
  private push(step: OperationStep, began: number): OperationStep {
    let placed = bounded(step);
    if (this.steps.length < MAX_STEPS - 1) this.steps.push(placed);
    else {
      // The last place says how many more there were.
      this.left++;
      placed = { ...placed, step: `${this.left} more step(s), the last: ${placed.step}` };
      this.steps[MAX_STEPS - 1] = placed;
      began = Number.MAX_SAFE_INTEGER;
    }
    this.beganAs.set(placed, began);
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
