// When to try a failed delivery again: exponential steps spread over about three days, with
// ±10% jitter so many failing deliveries do not return in step. A Retry-After from the
// receiver is honoured when it asks for longer (capped at a day).
export const DEFAULT_RETRY_DELAYS_MS = [
  5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000, 14 * 3600_000, 20 * 3600_000,
];

/** Delay before attempt number `attempts + 1`, or null when the schedule is exhausted. */
export function nextDelayMs(attempts: number, delays: readonly number[], retryAfterSeconds?: number, random = Math.random): number | null {
  const base = delays[attempts - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + random() * 0.2));
  const asked = retryAfterSeconds !== undefined ? Math.min(retryAfterSeconds * 1000, 24 * 3600_000) : 0;
  return Math.max(jittered, asked);
}

export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
