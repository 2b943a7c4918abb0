// Where `serve`'s request log goes. In production (stdout a pipe or a file) it stays one JSON line
// per request, for a log collector. In an interactive terminal, a newcomer's `npm start`, the
// JSON lines buried the banner and the one-time token: there each request is one short readable
// line, and the requests `serve` makes itself before the banner (the demo's staging copy is made
// through the API) are not shown at all, warnings and errors excepted.
import type { Writable } from 'node:stream';

interface LoggedLine {
  level?: number;
  time?: number;
  msg?: string;
  req?: { method?: string; url?: string };
  statusCode?: number;
  responseTime?: number;
  err?: { message?: string };
}

/** pino's level numbers: 30 info, 40 warn, 50 error. */
const WARN = 40;
const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

export interface TerminalRequestLog {
  /** What Fastify's logger writes to (pino calls `write` with one JSON line). */
  stream: { write(line: string): void };
  /** From now on info lines are shown too: call it once the banner is out. */
  showRequests(): void;
}

export function terminalRequestLog(out: Pick<Writable, 'write'>): TerminalRequestLog {
  let showingRequests = false;
  return {
    stream: {
      write(line: string) {
        const readable = readableLine(line);
        if (readable === undefined) return;
        if (!showingRequests && readable.level < WARN) return;
        out.write(`${readable.text}\n`);
      },
    },
    showRequests() {
      showingRequests = true;
    },
  };
}

/** One pino JSON line as `12:04:31 GET /api/service-erp 200 3.1 ms`; a line that is not JSON is shown as it is. */
export function readableLine(line: string): { level: number; text: string } | undefined {
  const trimmed = line.trim();
  if (trimmed === '') return undefined;
  let logged: LoggedLine;
  try {
    logged = JSON.parse(trimmed) as LoggedLine;
  } catch {
    return { level: WARN, text: trimmed };
  }
  const level = typeof logged.level === 'number' ? logged.level : 30;
  const clock = new Date(typeof logged.time === 'number' ? logged.time : Date.now()).toISOString().slice(11, 19);
  const parts = [clock];
  if (level !== 30) parts.push(LEVEL_NAMES[level] ?? String(level));
  if (logged.req?.method && logged.req.url) {
    parts.push(logged.req.method, logged.req.url);
    if (logged.statusCode !== undefined) parts.push(String(logged.statusCode));
    if (logged.responseTime !== undefined) parts.push(`${logged.responseTime} ms`);
    if (logged.msg && logged.msg !== 'request') parts.push(`(${logged.msg})`);
  } else {
    parts.push(logged.msg ?? '');
  }
  if (logged.err?.message) parts.push(`: ${logged.err.message}`);
  return { level, text: parts.join(' ') };
}
