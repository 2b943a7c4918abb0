// What a failure reason may quote of a program's output, with its secrets taken out. A reason is
// read by every token with services:read, so a database URL with its password, a
// `password=...` setting or the value of a secret we gave the service must never be stored in
// one (an image that fails at start often prints its whole configuration). The order matters:
// a secret is found only whole, so the quoted line is kept whole (quotableOutput) until its
// secrets are out, and only then cut to a reason's length (publicReason); a cut made first left
// the first characters of a password behind, which no rule recognizes any more.
import { visibleText } from '../core/plain-text.js';

const REDACTED = '[redacted]';

/** scheme://user:password@host: the password. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*):[^\s@/]*@/gi;

/**
 * password=..., "password": "...", PGPASSWORD=..., api_key: ..., with or without quotes. The
 * characters around the key's word are bounded: unbounded, a long line of word characters took
 * the search quadratic time (a quoted line is up to MAX_QUOTED_CHARS); a longer key still has
 * its value found, from a later start.
 */
const SECRET_SETTING = /(["']?)([\w.-]{0,40}(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[\w.-]{0,40})\1(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"')}\]]+)/gi;

/** Our own token and webhook-secret formats, wherever they appear. */
const OUR_SECRETS = /\b(?:tinf|whsec)_[A-Za-z0-9+/=_-]{8,}/g;

/** Known values shorter than this are not searched for: they would match ordinary words. */
const SHORTEST_KNOWN_SECRET = 6;

export function redactSecrets(text: string, knownSecrets: readonly (string | null | undefined)[] = []): string {
  let redacted = text;
  for (const secret of knownSecrets) {
    if (secret && secret.length >= SHORTEST_KNOWN_SECRET) redacted = redacted.split(secret).join(REDACTED);
  }
  return redacted
    .replace(URL_CREDENTIALS, `$1:${REDACTED}@`)
    .replace(SECRET_SETTING, (_match, quote: string, key: string, separator: string) => `${quote}${key}${quote}${separator}${REDACTED}`)
    .replace(OUR_SECRETS, REDACTED);
}

/**
 * The longest line a reason quotes before its secrets are out, in characters. Docker's log
 * drivers split a line at 16 KiB, so a container's last line is whole below this bound.
 */
export const MAX_QUOTED_CHARS = 16_384;

/**
 * A program's output line as a reason may quote it: whole, or when longer than the bound, cut at
 * a space, so that no secret without spaces (a generated password, a URL with credentials) is
 * left in part, where it could no longer be recognized. `cutBefore`: the line starts at an
 * arbitrary point (the start of a window read from a file), so its first word is dropped too.
 */
export function quotableOutput(line: string, cutBefore = false): string {
  let kept = cutBefore ? `…${line.replace(/^\S*\s*/, '')}` : line;
  if (kept.length > MAX_QUOTED_CHARS) {
    let end = MAX_QUOTED_CHARS + 1;
    while (end > 0 && !/\s/.test(kept[end - 1] as string)) end--;
    kept = `${kept.slice(0, end).trimEnd()}…`;
  }
  return kept;
}

/** The longest reason stored, in characters as shown: a step's detail holds it whole (operation-steps.ts keeps 500). */
export const MAX_REASON_CHARS = 480;

/** How much of the end of a long reason is kept: the end of the sentence and of the output it quotes. */
const KEPT_END_CHARS = 120;

const CUT_MARK = ' […] ';

/**
 * A failure reason as stored and shown on every channel: its secrets out first; then, when it is
 * still longer than MAX_REASON_CHARS, cut in the middle (the quoted output is its long part, and
 * the sentence's start and end stay), never inside a [redacted] or an escape; every invisible or
 * control character of it shown as an escape (visibleText), as in log lines.
 */
export function publicReason(reason: string, knownSecrets: readonly (string | null | undefined)[] = []): string {
  const pieces = redactSecrets(reason, knownSecrets).split(REDACTED);
  // The reason as units that are never cut: each character as shown, and each [redacted].
  const units = pieces.flatMap((piece, index) => [...(index > 0 ? [REDACTED] : []), ...Array.from(piece, visibleText)]);
  const shownLength = units.reduce((total, unit) => total + unit.length, 0);
  if (shownLength <= MAX_REASON_CHARS) return units.join('');
  const start = unitsWithin(units, MAX_REASON_CHARS - KEPT_END_CHARS - CUT_MARK.length);
  const end = unitsWithin([...units].reverse(), KEPT_END_CHARS).reverse();
  return `${start.join('').trimEnd()}${CUT_MARK}${end.join('').trimStart()}`;
}

/** The first units of `units` whose length together is at most `length`. */
function unitsWithin(units: readonly string[], length: number): string[] {
  const kept: string[] = [];
  let total = 0;
  for (const unit of units) {
    if (total + unit.length > length) break;
    kept.push(unit);
    total += unit.length;
  }
  return kept;
}
