// A per-token fixed-window rate limit, keyed by the hash of the presented bearer (or the
// client address when there is none), so floods of bad tokens are limited before any lookup.
// The panel keeps one of its own per session (src/panel/session-rate-limit.ts), its policy
// named "per-session". Headers follow draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy and RateLimit.
import { hashTokenValue } from '../auth/token-format.js';
import { AppError } from '../core/errors.js';

export interface RateLimitConfig {
  /** Requests allowed per window per token. */
  limit: number;
  windowSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  resetSeconds: number;
  policyHeader: string;
  limitHeader: string;
}

/** Anything that can carry the two rate-limit headers (a Fastify reply). */
interface HeaderTarget {
  header(name: string, value: string): unknown;
}

export class RateLimiter {
  private windowStartMs = 0;
  private counts = new Map<string, number>();
  private readonly policyHeader: string;

  constructor(private readonly config: RateLimitConfig, private readonly policyName = 'per-token') {
    this.policyHeader = `"${policyName}";q=${config.limit};w=${config.windowSeconds}`;
  }

  /**
   * One request of the caller presenting `bearer` (keyed by its hash, or by the address without
   * one): sets RateLimit-Policy and RateLimit, and throws 429 rate_limited past the limit.
   * REST and MCP both call this, so a token has one budget and one answer whichever it uses.
   * A `bucket` counts the request in a budget of its own beside that one (MCP task polls, which
   * follow a long action and should not use up the budget of the calls themselves).
   */
  admitRequest(bearer: string | undefined, address: string, reply: HeaderTarget, bucket?: string): void {
    const caller = bearer ? hashTokenValue(bearer) : `ip:${address}`;
    const decision = this.take(bucket ? `${caller} ${bucket}` : caller);
    reply.header('RateLimit-Policy', decision.policyHeader);
    reply.header('RateLimit', decision.limitHeader);
    if (!decision.allowed) {
      throw new AppError('rate_limited', `Too many requests for this token; try again in ${decision.resetSeconds} seconds.`, {
        retryAfterSeconds: decision.resetSeconds,
      });
    }
  }

  take(key: string, nowMs = Date.now()): RateDecision {
    const windowMs = this.config.windowSeconds * 1000;
    if (nowMs - this.windowStartMs >= windowMs) {
      // A new window forgets every key at once, which also bounds the map's memory.
      this.windowStartMs = nowMs - (nowMs % windowMs);
      this.counts = new Map();
    }
    const used = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, used);
    const remaining = Math.max(0, this.config.limit - used);
    const resetSeconds = Math.max(1, Math.ceil((this.windowStartMs + windowMs - nowMs) / 1000));
    return {
      allowed: used <= this.config.limit,
      remaining,
      resetSeconds,
      policyHeader: this.policyHeader,
      limitHeader: `"${this.policyName}";r=${remaining};t=${resetSeconds}`,
    };
  }
}

/** Reads TEAMINFRA_RATE_LIMIT ("600/60": requests per seconds); default 600 a minute. */
export function rateLimitFromEnv(value = process.env.TEAMINFRA_RATE_LIMIT): RateLimitConfig {
  const match = value ? /^(\d+)\/(\d+)$/.exec(value) : null;
  if (!match) return { limit: 600, windowSeconds: 60 };
  return { limit: Number(match[1]), windowSeconds: Math.max(1, Number(match[2])) };
}
