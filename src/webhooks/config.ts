// Operator settings for webhook delivery (environment, since teams cannot change them).
import { DEFAULT_RETRY_DELAYS_MS } from './retry-schedule.js';

export interface WebhookConfig {
  /** Allow http:// URLs (TEAMINFRA_WEBHOOK_ALLOW_HTTP=1); https only otherwise. */
  allowHttp: boolean;
  /** Allow private and loopback addresses for every webhook (TEAMINFRA_WEBHOOK_ALLOW_PRIVATE=1): local development only. */
  allowPrivate: boolean;
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  pollMs: number;
  /** An endpoint failing for longer than this is disabled. */
  disableAfterMs: number;
  /** Bytes of the response body kept in the delivery log. */
  excerptBytes: number;
}

export function webhookConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  return {
    allowHttp: env.TEAMINFRA_WEBHOOK_ALLOW_HTTP === '1',
    allowPrivate: env.TEAMINFRA_WEBHOOK_ALLOW_PRIVATE === '1',
    retryDelaysMs: env.TEAMINFRA_WEBHOOK_RETRY_DELAYS_MS
      ? env.TEAMINFRA_WEBHOOK_RETRY_DELAYS_MS.split(',').map(Number).filter((delay) => Number.isFinite(delay) && delay >= 0)
      : DEFAULT_RETRY_DELAYS_MS,
    timeoutMs: 10_000,
    pollMs: 500,
    disableAfterMs: 3 * 24 * 3600_000,
    excerptBytes: 1024,
  };
}
