// A log line as a client reads it: text, never markup or a terminal's commands. A service prints
// what it likes (colour codes, carriage returns that overwrite a line, text-direction overrides,
// invisible characters that carry hidden text to an assistant); all of it is shown escaped
// (\x1b, \x0d, \u202e, \u{e0041}: visibleText in src/core/plain-text.ts, which failure reasons
// use too), never interpreted or dropped, and a line longer than the bound is cut and says how
// long it was.
import { visibleText } from '../../core/plain-text.js';

/** The longest line answered, in characters, before it is cut. */
export const MAX_LINE_CHARS = 4_000;

/** The most text one answer carries, in characters: 5,000 cut lines would otherwise be 20 MB. */
export const MAX_PAGE_CHARS = 1_000_000;

/**
 * `raw` as shown: invisible, control and direction characters escaped, cut past MAX_LINE_CHARS.
 * Backslashes are left as printed (JSON logs stay readable), so a printed "\x1b" reads like an escaped one.
 */
export function displayLine(raw: string, printedLength = raw.length): string {
  const escaped = visibleText(raw.slice(0, MAX_LINE_CHARS));
  if (printedLength <= MAX_LINE_CHARS && escaped.length <= MAX_LINE_CHARS) return escaped;
  return `${escaped.slice(0, MAX_LINE_CHARS)} [line cut: ${printedLength} characters in all]`;
}

/**
 * Splits bytes into lines as they arrive, keeping at most a bound of each line: a service that
 * prints one endless line costs a few kilobytes here, not its length. `onLine` gets each
 * complete line's kept text, its length as printed (characters when kept whole), and its length in bytes.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private kept = 0;
  private length = 0;

  constructor(private readonly onLine: (text: string, printedLength: number, bytes: number) => void, private readonly keepBytes = MAX_LINE_CHARS * 4) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, end));
      this.flush();
      start = end + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** Ends the line being read as if its newline had come (a line longer than a whole read, which must still move on). */
  flushPartial(): void {
    if (this.length > 0) this.flush();
  }

  private take(bytes: Buffer): void {
    this.length += bytes.length;
    if (this.kept >= this.keepBytes) return;
    const part = bytes.subarray(0, this.keepBytes - this.kept);
    this.parts.push(Buffer.from(part));
    this.kept += part.length;
  }

  private flush(): void {
    const text = Buffer.concat(this.parts).toString('utf8');
    const bytes = this.length;
    const printed = bytes > this.kept ? bytes : text.length;
    this.parts = [];
    this.kept = 0;
    this.length = 0;
    this.onLine(text, printed, bytes);
  }
}

/** The longest run of `lines` from its end (`fromEnd`) or its start whose text fits in MAX_PAGE_CHARS. */
export function withinPageBound<T extends { text: string }>(lines: T[], fromEnd: boolean): T[] {
  let total = 0;
  let count = 0;
  for (const line of fromEnd ? [...lines].reverse() : lines) {
    total += line.text.length;
    if (total > MAX_PAGE_CHARS && count > 0) break;
    count++;
  }
  return fromEnd ? lines.slice(lines.length - count) : lines.slice(0, count);
}
