// A Docker service's log: the output of each of its containers (an app's several, labelled by
// their Compose service), read from the engine's logs API with the engine's time on each line,
// and merged in time order. Each container's log is one streaming call on a connection of its
// own, with the engine client's deadline on silence (docker-api.ts), and is left as soon as
// enough lines are read.
import type { Readable } from 'node:stream';
import { ObserverRefusal, type LogLine, type LogPage, type LogQuery } from '../../core/service-observer.js';
import type { DockerApi } from '../docker/docker-api.js';
import { listAppContainers } from '../docker/app-containers.js';
import { compareTimes, cursorOfEngineTime, decodeCursor, encodeCursor, engineSinceAfter, engineSinceAt, type LogCursor } from './log-cursor.js';
import { displayLine, LineSplitter, withinPageBound } from './log-lines.js';

type TimeCursor = Extract<LogCursor, { kind: 'time' }>;

interface TimedLine extends LogLine {
  time: TimeCursor;
  order: number;
}

const FROM_THE_START: TimeCursor = { kind: 'time', seconds: 0n, nanos: 0n };

export async function readDockerLogs(api: DockerApi, serviceId: string, query: LogQuery): Promise<LogPage> {
  const forward = query.start.kind !== 'latest';
  let since: string | undefined;
  let before: TimeCursor = FROM_THE_START;
  if (query.start.kind === 'cursor') {
    const cursor = decodeCursor(query.start.cursor);
    if (cursor.kind !== 'time') throw new ObserverRefusal('This cursor was given for a service on a local server, not for this one.', 'bad_input');
    since = engineSinceAfter(cursor);
    before = cursor;
  } else if (query.start.kind === 'time') {
    since = engineSinceAt(query.start.at);
    before = justBefore(query.start.at);
  }
  const containers = await listAppContainers(api, serviceId);
  let order = 0;
  const read = await Promise.all(containers.map(async (container) => {
    const stream = await api.stream('GET', `/containers/${container.id}/logs`, {
      query: { stdout: 1, stderr: 1, timestamps: 1, ...(since ? { since } : { tail: query.tail }) },
    });
    // Reading forward, one line past the page tells that more are waiting.
    return readLines(stream, container.appService || container.name, forward ? query.tail + 1 : Infinity, () => order++);
  }));
  const merged = read.flat().sort((a, b) => compareTimes(a.time, b.time) || a.order - b.order);
  const page = forward ? withinPageBound(merged.slice(0, query.tail), false) : withinPageBound(merged.slice(-query.tail), true);
  const last = page.at(-1)?.time ?? before;
  return {
    lines: page.map((line) => ({ container: line.container, at: line.at, text: line.text })),
    next_cursor: encodeCursor(last),
    more: forward && merged.length > page.length,
  };
}

/** Up to `limit` lines of one container's log; the call ends (its connection closed) once they are read. */
async function readLines(stream: Readable, container: string, limit: number, nextOrder: () => number): Promise<TimedLine[]> {
  const lines: TimedLine[] = [];
  const splitters = new Map<number, LineSplitter>();
  const splitterOf = (kind: number) => {
    let splitter = splitters.get(kind);
    if (!splitter) {
      splitter = new LineSplitter((text, printed) => {
        const line = timedLine(text, printed, container, nextOrder());
        if (line && lines.length < limit) lines.push(line);
      });
      splitters.set(kind, splitter);
    }
    return splitter;
  };
  const frames = new FrameReader((kind, payload) => splitterOf(kind).push(payload));
  try {
    for await (const chunk of stream) {
      frames.push(chunk as Buffer);
      if (lines.length >= limit) break;
    }
  } finally {
    stream.destroy();
  }
  // A container that ended in the middle of a line (a prompt such as trytond-admin's, which is
  // all a first migration prints) leaves it without its newline: it is still a line of the log.
  if (lines.length < limit) for (const splitter of splitters.values()) splitter.flushPartial();
  return lines;
}

/** "2026-11-25T18:30:00.123456789Z text" as a line; null for anything that does not start with the engine's time. */
function timedLine(text: string, printed: number, container: string, order: number): TimedLine | null {
  const space = text.indexOf(' ');
  const time = cursorOfEngineTime(space === -1 ? text : text.slice(0, space));
  if (!time || time.kind !== 'time') return null;
  const body = space === -1 ? '' : text.slice(space + 1).replace(/\r$/, '');
  const at = new Date(Number(time.seconds) * 1000 + Number(time.nanos / 1_000_000n)).toISOString();
  return { container, at, text: displayLine(body, printed - (text.length - body.length)), time, order };
}

function justBefore(at: Date): TimeCursor {
  const total = BigInt(at.getTime()) * 1_000_000n - 1n;
  return { kind: 'time', seconds: total / 1_000_000_000n, nanos: total % 1_000_000_000n };
}

/**
 * The engine's log stream: for a container without a terminal, frames of an 8-byte header
 * (stream 1 stdout or 2 stderr, three zero bytes, the length) and their bytes; for one with a
 * terminal, the raw bytes. Told apart by the first bytes: a raw log line starts with its time.
 */
class FrameReader {
  private pending: Buffer = Buffer.alloc(0);
  private framed: boolean | undefined;

  constructor(private readonly onPayload: (stream: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    if (this.framed === false) return this.onPayload(1, chunk);
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    if (this.framed === undefined) {
      if (this.pending.length < 4) return;
      const first = this.pending[0] as number;
      this.framed = first <= 2 && this.pending[1] === 0 && this.pending[2] === 0 && this.pending[3] === 0;
      if (!this.framed) {
        const raw = this.pending;
        this.pending = Buffer.alloc(0);
        return this.onPayload(1, raw);
      }
    }
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      this.onPayload(this.pending[0] as number, this.pending.subarray(8, 8 + size));
      this.pending = this.pending.subarray(8 + size);
    }
  }
}
