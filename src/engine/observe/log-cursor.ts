// The cursor an answer of get_erp_service_logs carries, to read on from where it ended. Opaque
// to clients, but plain inside: on the local driver a byte offset in service.log ("f" and the
// offset), on Docker the engine's time of the last line read ("t", seconds and nanoseconds, as
// the engine's `since` takes it). A cursor reads what came strictly after it.
import { ObserverRefusal } from '../../core/service-observer.js';

export type LogCursor = { kind: 'file'; offset: number } | { kind: 'time'; seconds: bigint; nanos: bigint };

export function encodeCursor(cursor: LogCursor): string {
  return cursor.kind === 'file' ? `f${cursor.offset}` : `t${cursor.seconds}.${cursor.nanos.toString().padStart(9, '0')}`;
}

export function decodeCursor(text: string): LogCursor {
  const file = /^f(\d{1,15})$/.exec(text);
  if (file) return { kind: 'file', offset: Number(file[1]) };
  const time = /^t(\d{1,12})\.(\d{9})$/.exec(text);
  if (time) return { kind: 'time', seconds: BigInt(time[1] as string), nanos: BigInt(time[2] as string) };
  throw new ObserverRefusal('since is neither a time (ISO 8601) nor a cursor given by an earlier answer (next_cursor).', 'bad_input');
}

/** The engine's RFC 3339 time with nanoseconds ("2026-11-25T18:30:00.123456789Z") as a cursor; null when it is not one. */
export function cursorOfEngineTime(text: string): LogCursor | null {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!match) return null;
  const whole = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(whole)) return null;
  return { kind: 'time', seconds: BigInt(whole / 1000), nanos: BigInt((match[2] ?? '').padEnd(9, '0')) };
}

/** A cursor's time as the engine's `since` takes it, one nanosecond later: what follows the cursor, not the line it names. */
export function engineSinceAfter(cursor: Extract<LogCursor, { kind: 'time' }>): string {
  const total = cursor.seconds * 1_000_000_000n + cursor.nanos + 1n;
  return `${total / 1_000_000_000n}.${(total % 1_000_000_000n).toString().padStart(9, '0')}`;
}

/** A time as the engine's `since` takes it: lines at or after it. */
export function engineSinceAt(at: Date): string {
  const ms = BigInt(at.getTime());
  return `${ms / 1000n}.${((ms % 1000n) * 1_000_000n).toString().padStart(9, '0')}`;
}

/** Orders two time cursors (for merging the lines of several containers). */
export function compareTimes(a: Extract<LogCursor, { kind: 'time' }>, b: Extract<LogCursor, { kind: 'time' }>): number {
  return a.seconds === b.seconds ? Number(a.nanos - b.nanos) : a.seconds < b.seconds ? -1 : 1;
}
