// The watcher's numbers. Only the interval is an installation setting (TEAMINFRA_HEALTH_INTERVAL_S,
// seconds, default 30); the others are fixed so that every team's incidents mean the same.

export const DEFAULT_HEALTH_INTERVAL_S = 30;
/** Failed checks in a row before a running service is unhealthy (one slow answer is no incident). */
export const FAILED_CHECKS_BEFORE_UNHEALTHY = 3;
/** Failed pings in a row before a server is unreachable. */
export const FAILED_PINGS_BEFORE_UNREACHABLE = 3;
/** A crash loop: the engine restarted the service's containers this many times ... */
export const CRASH_LOOP_RESTARTS = 3;
/** ... within this window. It ends once the window has passed with no restart. */
export const CRASH_LOOP_WINDOW_MS = 5 * 60_000;
/** How long after a start, redeploy or restore a crash loop is also told in that operation's result. */
export const WATCH_AFTER_OPERATION_MS = 5 * 60_000;
/** The longest a check or a ping waits for its answer (shorter when the interval is). */
export const CHECK_TIMEOUT_MS = 5_000;

/** The interval in milliseconds from TEAMINFRA_HEALTH_INTERVAL_S; throws a sentence on a value that is not a positive number of seconds. */
export function healthIntervalMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.TEAMINFRA_HEALTH_INTERVAL_S;
  if (text === undefined || text.trim() === '') return DEFAULT_HEALTH_INTERVAL_S * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 0.1 || seconds > 86_400) {
    throw new Error(`TEAMINFRA_HEALTH_INTERVAL_S must be a number of seconds from 0.1 to 86400 (default ${DEFAULT_HEALTH_INTERVAL_S}); it is "${text}".`);
  }
  return Math.round(seconds * 1000);
}

/** A check's deadline: CHECK_TIMEOUT_MS, or half the interval when that is shorter, so a pass of hung services keeps its interval. */
export function checkTimeoutMs(intervalMs: number): number {
  return Math.max(100, Math.min(CHECK_TIMEOUT_MS, Math.floor(intervalMs / 2)));
}
