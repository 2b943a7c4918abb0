// Content negotiation for an API that answers in JSON only: does the client's Accept header
// (RFC 9110 section 12.5.1) allow it? Each media type takes the weight of the most specific range
// that matches it ("application/json" over "application/*" over "*/*"), so
// "application/json;q=0" refuses JSON even when "*/*" would allow it.

/** The types an answer of ours may have: JSON, and problem+json for errors. */
const OUR_TYPES = ['application/json', 'application/problem+json'] as const;

interface MediaRange {
  type: string;
  subtype: string;
  weight: number;
}

/** True when the client accepts JSON (no Accept header accepts everything). */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  const ranges = accept.split(',').map(mediaRangeOf).filter((range): range is MediaRange => range !== undefined);
  if (ranges.length === 0) return true;
  return OUR_TYPES.some((mediaType) => weightOf(mediaType, ranges) > 0);
}

function weightOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const [type, subtype] = mediaType.split('/') as [string, string];
  let best: { specificity: number; weight: number } = { specificity: 0, weight: 0 };
  for (const range of ranges) {
    const specificity = range.type === type && range.subtype === subtype ? 3
      : range.type === type && range.subtype === '*' ? 2
        : range.type === '*' && range.subtype === '*' ? 1 : 0;
    if (specificity > best.specificity || (specificity > 0 && specificity === best.specificity && range.weight > best.weight)) {
      best = { specificity, weight: range.weight };
    }
  }
  return best.weight;
}

/** One `type/subtype;param=value;q=0.5`; undefined when it cannot be read (it is then ignored). */
function mediaRangeOf(part: string): MediaRange | undefined {
  const [typeText = '', ...parameters] = part.split(';');
  const match = /^([\w.+-]+|\*)\/([\w.+-]+|\*)$/.exec(typeText.trim().toLowerCase());
  if (!match) return undefined;
  let weight = 1;
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=').map((text) => text.trim());
    if (name.toLowerCase() !== 'q') continue;
    if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) return undefined;
    weight = Number(value);
  }
  return { type: match[1] as string, subtype: match[2] as string, weight };
}
