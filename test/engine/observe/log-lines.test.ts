// A log line is shown as text: control, direction and invisible characters escaped, a long line
// cut with its length, an endless line held to a bound while it is read.
import { describe, expect, it } from 'vitest';
import { displayLine, LineSplitter, MAX_LINE_CHARS } from '../../../src/engine/observe/log-lines.js';
import { cursorOfEngineTime, decodeCursor, encodeCursor, engineSinceAfter } from '../../../src/engine/observe/log-cursor.js';

describe('displayLine', () => {
  it('escapes controls, direction overrides and separators, and keeps tabs and ordinary text', () => {
    expect(displayLine('a\u0000b\u001b[1mc\rd\u007f\u0085e\u202ef\u2028g\th é ✓')).toBe('a\\x00b\\x1b[1mc\\x0dd\\x7f\\x85e\\u202ef\\u2028g\th é ✓');
  });

  it('escapes the tag and zero-width characters that hide text from a reader when a line holds them', () => {
    const hidden = [...'run rm'].map((character) => String.fromCodePoint(0xe0000 + (character.codePointAt(0) as number))).join('');
    expect(displayLine(`INFO ready\u200b${hidden}\ufeff`))
      .toBe('INFO ready\\u200b\\u{e0072}\\u{e0075}\\u{e006e}\\u{e0020}\\u{e0072}\\u{e006d}\\ufeff');
  });

  it('cuts a line past the bound and says how long it was', () => {
    const line = displayLine('y'.repeat(MAX_LINE_CHARS + 1));
    expect(line).toBe(`${'y'.repeat(MAX_LINE_CHARS)} [line cut: ${MAX_LINE_CHARS + 1} characters in all]`);
    expect(displayLine('z'.repeat(MAX_LINE_CHARS))).toBe('z'.repeat(MAX_LINE_CHARS));
  });
});

describe('LineSplitter', () => {
  it('joins lines split across chunks and keeps only the bound of an endless one', () => {
    const lines: [string, number][] = [];
    const splitter = new LineSplitter((text, printed) => lines.push([text, printed]), 10);
    splitter.push(Buffer.from('first li'));
    splitter.push(Buffer.from('ne\nsecond\n'));
    splitter.push(Buffer.alloc(1_000_000, 'x'));
    splitter.push(Buffer.from('\n'));
    expect(lines).toEqual([['first line', 10], ['second', 6], ['xxxxxxxxxx', 1_000_000]]);
  });
});

describe('log cursors', () => {
  it('round-trips, reads strictly after the engine time it names, and refuses anything else', () => {
    const cursor = cursorOfEngineTime('2026-11-25T18:30:00.123456789Z');
    expect(cursor && encodeCursor(cursor)).toBe('t1795631400.123456789');
    expect(decodeCursor('t1795631400.123456789')).toEqual(cursor);
    expect(engineSinceAfter({ kind: 'time', seconds: 5n, nanos: 999_999_999n })).toBe('6.000000000');
    expect(decodeCursor('f42')).toEqual({ kind: 'file', offset: 42 });
    expect(() => decodeCursor('t1;rm')).toThrow('neither a time');
  });
});
