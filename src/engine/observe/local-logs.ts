// The local driver's log: the process's output, appended to service.log in its directory (launch.ts).
// The file keeps no time per line, so it is read by byte offset: the cursor is where an answer
// ended, and a time in `since` is refused with a sentence that says to use a cursor.
import { open } from 'node:fs/promises';
import { ObserverRefusal, type LogLine, type LogPage, type LogQuery } from '../../core/service-observer.js';
import { decodeCursor, encodeCursor } from './log-cursor.js';
import { displayLine, LineSplitter, withinPageBound } from './log-lines.js';

/** The most bytes of the file one answer reads: enough for 5,000 ordinary lines. */
const READ_BOUND_BYTES = 2 * 1024 * 1024;

interface FileLine extends LogLine {
  /** The offset just past the line's newline: a cursor that reads on after it. */
  end: number;
}

export async function readLocalLog(path: string, query: LogQuery): Promise<LogPage> {
  if (query.start.kind === 'time') {
    throw new ObserverRefusal('This service runs on a local server, whose log keeps no time per line: pass the next_cursor of an earlier answer as since, ' +
      'or leave since out for the latest lines.', 'bad_input');
  }
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!file) return { lines: [], next_cursor: encodeCursor({ kind: 'file', offset: 0 }), more: false };
  try {
    const size = (await file.stat()).size;
    if (query.start.kind === 'latest') {
      const from = Math.max(0, size - READ_BOUND_BYTES);
      const lines = await linesOf(file, from, size, from > 0);
      const kept = withinPageBound(lines.slice(-query.tail), true);
      return { lines: kept.map(publicLine), next_cursor: encodeCursor({ kind: 'file', offset: lines.at(-1)?.end ?? from }), more: false };
    }
    const cursor = decodeCursor(query.start.cursor);
    if (cursor.kind !== 'file') throw new ObserverRefusal('This cursor was given for a service on a Docker server, not for this one.', 'bad_input');
    // A log shorter than the cursor was replaced (the service was deleted and made again): from its start.
    const from = cursor.offset > size ? 0 : cursor.offset;
    const to = Math.min(size, from + READ_BOUND_BYTES);
    const lines = await linesOf(file, from, to, false, to < size);
    const kept = withinPageBound(lines.slice(0, query.tail), false);
    const end = kept.at(-1)?.end ?? from;
    return { lines: kept.map(publicLine), next_cursor: encodeCursor({ kind: 'file', offset: end }), more: lines.length > kept.length || to < size };
  } finally {
    await file.close();
  }
}

/** The complete lines between two offsets (a line still being written is left for the next read); the first is skipped when it may be a line's tail. */
async function linesOf(
  file: Awaited<ReturnType<typeof open>>, from: number, to: number, skipFirst: boolean, mustMove = false,
): Promise<FileLine[]> {
  const buffer = Buffer.alloc(to - from);
  const { bytesRead } = await file.read(buffer, 0, buffer.length, from);
  const lines: FileLine[] = [];
  let end = from;
  let skip = skipFirst;
  const splitter = new LineSplitter((text, printed, bytes) => {
    end = Math.min(end + bytes + 1, from + bytesRead);
    if (skip) {
      skip = false;
      return;
    }
    lines.push({ container: null, at: null, text: displayLine(text.replace(/\r$/, ''), printed), end });
  });
  splitter.push(buffer.subarray(0, bytesRead));
  // A single line longer than a whole read: answered cut, so that the cursor moves past it.
  if (mustMove && lines.length === 0) splitter.flushPartial();
  return lines;
}

function publicLine(line: FileLine): LogLine {
  return { container: line.container, at: line.at, text: line.text };
}
