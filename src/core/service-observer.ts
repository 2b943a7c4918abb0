// What the capabilities read from a running ERP service (its output and its use of the machine),
// declared here so that the core and the catalog depend on no engine: the engine provides it
// (src/engine/observe), and a process without one (none today) would answer that it cannot.

/** Where to read from: the latest lines, or those after a time or a cursor (oldest first). */
export type LogStart = { kind: 'latest' } | { kind: 'time'; at: Date } | { kind: 'cursor'; cursor: string };

export interface LogQuery {
  /** The most lines answered. */
  tail: number;
  start: LogStart;
}

export interface LogLine {
  /** Which container wrote it (an app's Compose service, or the container's name); null on the local driver. */
  container: string | null;
  /** When the engine received it; null where the log keeps no time (the local driver's file). */
  at: string | null;
  /** The text, control characters escaped, cut past a bound (log-lines.ts). */
  text: string;
}

export interface LogPage {
  lines: LogLine[];
  /** Pass as `since` to read the lines written after these. */
  next_cursor: string;
  /** Lines after these were left out (past `tail` or the size bound): read on with next_cursor now. */
  more: boolean;
}

export interface ServiceMetrics {
  /** Whether a process or container of the service runs now, as the engine sees it. */
  running: boolean;
  started_at: string | null;
  uptime_seconds: number | null;
  restarts: number | null;
  cpu: { percent: number; window_seconds: number } | null;
  memory_bytes: number | null;
  memory_limit_bytes: number | null;
  data_bytes: number | null;
}

export interface ServiceObserver {
  logs(serviceId: string, query: LogQuery): Promise<LogPage>;
  metrics(serviceId: string): Promise<ServiceMetrics>;
}

/** A refusal written for the caller (a bad cursor, an engine that does not answer): it becomes the answer's sentence. */
export class ObserverRefusal extends Error {
  constructor(readonly reason: string, readonly kind: 'bad_input' | 'unavailable') {
    super(reason);
  }
}
