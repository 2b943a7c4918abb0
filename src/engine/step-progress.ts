// Progress of a long wait deep inside a driver call (an image being pulled), shown among the
// operation's steps while it lasts. The step log (operation-steps.ts) runs each driver call in
// this context, so the code that waits reports without every driver method carrying a hook for
// it (provision and copy take none). Outside an operation (a test, the CLI) reports go nowhere.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface StepProgress {
  /**
   * The step `key` as it is now: the first report adds it to the steps, each later one replaces
   * it (so a pull is one step however long it takes), the last with how it ended.
   */
  progress(key: string, step: string, detail: string | null, outcome?: 'done' | 'failed'): void;
}

const current = new AsyncLocalStorage<StepProgress>();

export function withStepProgress<T>(sink: StepProgress, work: () => T): T {
  return current.run(sink, work);
}

export function reportStepProgress(key: string, step: string, detail: string | null, outcome: 'done' | 'failed' = 'done'): void {
  current.getStore()?.progress(key, step, detail, outcome);
}
