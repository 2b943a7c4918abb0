// One pass of background work on an interval, one at a time: the backup scheduler, the off-site
// uploader, the restore drills, the health watcher and the proxy keeper each run their pass
// through this. A tick while a pass runs joins that pass rather than start a second one (a slow
// pass over many services must not pile up behind itself), and a pass's failure is told to
// onError and never stops the next one.

export interface PeriodicPassOptions {
  /** Between passes; 0 or less: only when tick() is called (tests, or a setting that turns it off). */
  intervalMs: number;
  /** Whether start() runs a pass at once (a slot missed while every node was down is taken now) or only after the first interval. */
  atStart: boolean;
  /** What the work is, for the log: "taking scheduled backups". */
  what: string;
  onError(error: unknown, context: string): void;
}

export class PeriodicPass<T> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;

  constructor(private readonly pass: () => Promise<T>, private readonly options: PeriodicPassOptions) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    const run = () => {
      this.tick().catch((error: unknown) => this.options.onError(error, this.options.what));
    };
    if (this.options.atStart) run();
    this.timer = setInterval(run, this.options.intervalMs);
    this.timer.unref();
  }

  /** One pass; resolves when it ends (the one under way, if any). */
  tick(): Promise<T> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** No more passes; waits up to `graceMs` for the one under way (its failure was told already). */
  async stop(graceMs = Infinity): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const ending = this.running?.then(() => undefined, () => undefined);
    if (!ending || !Number.isFinite(graceMs)) return ending;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ending, new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); })]);
    clearTimeout(timer);
  }
}
