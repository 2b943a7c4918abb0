// Which characters a name or description may not hold (controls and text-direction controls),
// and how text others wrote is shown: every character that acts or hides written as an escape.
import { describe, expect, it } from 'vitest';
import { plainTextProblem, refusedCharacterIn, visibleText } from '../../src/core/plain-text.js';

describe('refusedCharacterIn', () => {
  it('names the first control or direction character when a name holds one', () => {
    const cases: [string, string][] = [
      ['evil\u0000name', 'U+0000'], ['tab\there', 'U+0009'], ['line\nbreak', 'U+000A'], ['esc\u001b[31m', 'U+001B'],
      ['del\u007f', 'U+007F'], ['c1\u0085', 'U+0085'], ['invoice\u202Efdp.exe', 'U+202E'], ['\u202Aembed', 'U+202A'],
      ['iso\u2066late', 'U+2066'], ['pdi\u2069', 'U+2069'], ['mark\u200F', 'U+200F'], ['lrm\u200E', 'U+200E'],
      ['alm\u061C', 'U+061C'], ['sep\u2028', 'U+2028'], ['lone\uD800', 'U+D800'],
    ];
    for (const [text, code] of cases) expect(refusedCharacterIn(text), code).toBe(code);
  });

  it('accepts ordinary text in any script, emoji sequences and punctuation', () => {
    for (const text of ['Production ERP', 'Café Zürich', 'שרת ראשי', 'خادم الإنتاج', '生产服务器', 'team 👩‍💻 (eu-west-1)', 'a—b “c”']) {
      expect(refusedCharacterIn(text), text).toBeUndefined();
    }
  });
});

describe('plainTextProblem', () => {
  it('ends a sentence naming the character when the text is refused', () => {
    expect(plainTextProblem('a\u202Eb')).toBe('must not contain control characters or characters that change the direction of text (found U+202E).');
    expect(plainTextProblem('fine')).toBeUndefined();
  });
});

describe('visibleText', () => {
  it('escapes controls, direction controls, separators, zero-width and tag characters when text holds them', () => {
    // "hi" in tag characters, between the tag block's begin and cancel tags: invisible in a browser, read by a model.
    expect(visibleText('ok\u{E0001}\u{E0068}\u{E0069}\u{E007F}')).toBe('ok\\u{e0001}\\u{e0068}\\u{e0069}\\u{e007f}');
    const cases: [string, string][] = [
      ['\u001b[31m', '\\x1b[31m'], ['\r', '\\x0d'], ['\u0000', '\\x00'], ['\u007f', '\\x7f'], ['\u0085', '\\x85'], ['\u00ad', '\\xad'],
      ['\u202e', '\\u202e'], ['\u2066', '\\u2066'], ['\u200e', '\\u200e'], ['\u061c', '\\u061c'], ['\u2028', '\\u2028'],
      ['\u200b', '\\u200b'], ['\u200d', '\\u200d'], ['\u2060', '\\u2060'], ['\ufeff', '\\ufeff'], ['\u3164', '\\u3164'],
      ['\ufe0f', '\\ufe0f'], ['\u{E0000}', '\\u{e0000}'], ['\u{E0100}', '\\u{e0100}'], ['\ud800', '\\ud800'], ['\u180e', '\\u180e'],
    ];
    for (const [raw, shown] of cases) expect(visibleText(`a${raw}b`), shown).toBe(`a${shown}b`);
  });

  it('keeps tabs, backslashes and visible text in any script as they are', () => {
    for (const text of ['Café Zürich\tok', 'שרת ראשי', 'خادم الإنتاج', '生产服务器', 'a—b “c” ✓ 👍', 'C:\\path \\x1b']) expect(visibleText(text)).toBe(text);
  });
});
