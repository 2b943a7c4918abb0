// The audit trail: a row for every action and every denial, and the token's last-used time
// for reads. Writes are buffered and flushed together, off the hot path of requests; reads
// touch last-used at most once per token per throttle window instead of writing a row each.
import type { Kysely } from 'kysely';
import type { AuditLogTable, Database } from '../db/tables.js';
import { newId } from '../db/ids.js';
import { touchTokensLastUsed } from '../db/repositories/tokens.js';

export type AuditEntry = Omit<AuditLogTable, 'id' | 'at'> & { at?: string };

export interface AuditOptions {
  flushIntervalMs?: number;
  lastUsedThrottleMs?: number;
  /** Where a failed flush is reported; the entries are kept for the next attempt. */
  onError?: (error: unknown) => void;
}

/**
 * An audit row's id and time, from one clock reading: the activity trail's time filters bound the
 * id (repositories/activity.ts), so an id a millisecond older than its `at` put an entry on the
 * wrong side of an `until` equal to its own time.
 */
export function auditStamp(at?: string): { id: string; at: string } {
  const millis = at === undefined ? Date.now() : Date.parse(at);
  return { id: newId('aud', millis), at: at ?? new Date(millis).toISOString() };
}

export class AuditLog {
  private pendingEntries: AuditLogTable[] = [];
  private pendingUses = new Map<string, { tokenId: string; at: string; channel: string }>();
  private lastTouched = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly throttleMs: number;
  private flushing: Promise<void> | undefined;

  constructor(private readonly db: Kysely<Database>, private readonly options: AuditOptions = {}) {
    this.throttleMs = options.lastUsedThrottleMs ?? 30_000;
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 250);
    this.timer.unref();
  }

  record(entry: AuditEntry): void {
    this.pendingEntries.push({ ...entry, ...auditStamp(entry.at) });
  }

  /** Notes a use of a token; persisted at most once per throttle window. */
  tokenUsed(tokenId: string, channel: string, nowMs = Date.now()): void {
    const last = this.lastTouched.get(tokenId);
    if (last !== undefined && nowMs - last < this.throttleMs) return;
    this.lastTouched.set(tokenId, nowMs);
    this.pendingUses.set(tokenId, { tokenId, at: new Date(nowMs).toISOString(), channel });
  }

  /**
   * Writes every entry and use recorded before the call. One write runs at a time: a call made
   * while one runs (the timer's) waits for it, then writes what that one had not taken; returning
   * the running write alone lost, for the caller, whatever was recorded after it began.
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pendingEntries.length === 0 && this.pendingUses.size === 0) return;
    const entries = this.pendingEntries;
    const uses = [...this.pendingUses.values()];
    this.pendingEntries = [];
    this.pendingUses = new Map();
    this.flushing = this.db.transaction().execute(async (trx) => {
      if (entries.length > 0) {
        // Chunked: SQLite limits the number of bound parameters per statement.
        for (let start = 0; start < entries.length; start += 50) {
          await trx.insertInto('audit_log').values(entries.slice(start, start + 50)).execute();
        }
      }
      await touchTokensLastUsed(trx, uses);
    }).catch((error: unknown) => {
      this.pendingEntries.unshift(...entries);
      for (const use of uses) if (!this.pendingUses.has(use.tokenId)) this.pendingUses.set(use.tokenId, use);
      this.options.onError?.(error);
    }).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
