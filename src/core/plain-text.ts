// Names and descriptions people give (services, servers, teams, tokens, webhooks, members' emails)
// are shown to other people: in the panel, in lists, in an assistant's context, in logs. Some
// characters have no place there: control characters (NUL, line breaks, escape sequences), which
// can cut or forge what is displayed, and the invisible bidirectional-text controls (such as
// U+202E RIGHT-TO-LEFT OVERRIDE), which make text read differently from what it is
// ("Trojan Source", CVE-2021-42574). They are refused, never silently removed. Text we only pass
// on (logs, a program's output in a failure reason) is shown with them escaped (visibleText).

// Cc: C0 and C1 controls with NUL and DEL; Cs: lone surrogates (not text); U+061C, U+200E,
// U+200F: direction marks; U+202A-U+202E: embeddings and overrides; U+2066-U+2069: isolates;
// U+2028, U+2029: line and paragraph separators.
const REFUSED = /[\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029]/u;

/** The first refused character of `text` as "U+XXXX", or undefined when there is none. */
export function refusedCharacterIn(text: string): string | undefined {
  const found = REFUSED.exec(text)?.[0];
  if (found === undefined) return undefined;
  return `U+${(found.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The end of a sentence that starts with the field's name, or undefined when the text is acceptable. */
export function plainTextProblem(text: string): string | undefined {
  const found = refusedCharacterIn(text);
  return found === undefined ? undefined
    : `must not contain control characters or characters that change the direction of text (found ${found}).`;
}

/** The same for text written over several lines (a decision's context or answer): line breaks and tabs are allowed there. */
export function multilineTextProblem(text: string): string | undefined {
  return plainTextProblem(text.replace(/\r?\n|\t/g, ' '));
}

// Text that others wrote and we only pass on (a service's log lines, a program's output quoted in
// a failure reason) is never refused: it is shown, with every character that would act rather than
// be read written as an escape, so that a person, a terminal and an assistant all see the same
// text. Cc: controls (tab excepted: it only moves the text); Cf: format characters, among them
// the direction controls, zero-width characters and the tag characters (U+E0001, U+E0020-U+E007F)
// that carry hidden text to an assistant; Cs: lone surrogates; Zl, Zp: line and paragraph
// separators; Default_Ignorable_Code_Point: whatever else a renderer draws as nothing (soft
// hyphen, Hangul fillers, variation selectors, the unassigned rest of the tag block). Emoji
// sequences joined by U+200D or styled by U+FE0F show their joiners: hidden text costs more.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

function escapeOf(character: string): string {
  const code = character.codePointAt(0) as number;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * `text` with each invisible, control or format character written as an escape (\x1b, \u202e,
 * \u{e0041}); tabs and everything visible are kept as they are, backslashes too.
 */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (character) => (character === '\t' ? character : escapeOf(character)));
}
