// Limits failed sign-ins: after `maxFailures` failures of one key (an email, or a client
// address) in 15 minutes, further attempts are refused until the oldest failure ages out.
const WINDOW_MS = 15 * 60_000;

export class SignInThrottle {
  private failures = new Map<string, number[]>();

  constructor(private readonly maxFailures: number) {}

  /** Seconds to wait before another attempt, or 0 when allowed. */
  waitSeconds(key: string, now = Date.now()): number {
    const recent = (this.failures.get(key) ?? []).filter((at) => now - at < WINDOW_MS);
    this.failures.set(key, recent);
    if (recent.length < this.maxFailures) return 0;
    return Math.ceil(((recent[recent.length - this.maxFailures] as number) + WINDOW_MS - now) / 1000);
  }

  failed(key: string, now = Date.now()): void {
    this.failures.set(key, [...(this.failures.get(key) ?? []), now]);
    if (this.failures.size > 10_000) this.forgetOld(now);
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  private forgetOld(now: number): void {
    for (const [key, times] of this.failures) if (times.every((at) => now - at >= WINDOW_MS)) this.failures.delete(key);
  }
}
