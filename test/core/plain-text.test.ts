// Which characters a name or description may not hold: controls and text-direction controls.
import { describe, expect, it } from 'vitest';
import { plainTextProblem, refusedCharacterIn } from '../../src/core/plain-text.js';

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
