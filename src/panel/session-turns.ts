// At most TURNS_PER_SESSION requests of one panel session run at a time; the others wait their
// turn, in order. A browser keeps at most six connections to a host (all its tabs together), so
// a person never waits here, even when a slow engine holds a service page's requests; a script
// that keeps 40 requests in flight runs six at a time. The rate limit (session-rate-limit.ts)
// decides first, so at most a window's budget ever waits.
// Why it matters: a request's SQLite reads are synchronous, so once it starts it runs to its end
// without giving the event loop back, and 40 requests that arrived together ran back to back
// ahead of another team's request (issue 37). The caller hands a turn on in a later turn of the
// event loop (setImmediate), so another team's request is read between two of the script's.
export const TURNS_PER_SESSION = 6;

interface Turns { running: number; waiting: (() => void)[] }

export class SessionTurns {
  private readonly sessions = new Map<string, Turns>();

  constructor(private readonly perSession = TURNS_PER_SESSION) {}

  /** Resolves when a request of `key` may run, with the release to call once its answer is done (a second call does nothing). */
  async take(key: string): Promise<() => void> {
    let turns = this.sessions.get(key);
    if (!turns) this.sessions.set(key, (turns = { running: 0, waiting: [] }));
    const own = turns;
    if (own.running < this.perSession) own.running++;
    // A released turn is handed straight to the first waiter, so `running` stays as it is.
    else await new Promise<void>((resolve) => own.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = own.waiting.shift();
      if (next) next();
      else if (--own.running === 0) this.sessions.delete(key);
    };
  }

  /** Requests of `key` running now (for tests and the bench). */
  runningOf(key: string): number {
    return this.sessions.get(key)?.running ?? 0;
  }
}
