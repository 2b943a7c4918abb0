// Server-rendered HTML with escaping by default: every interpolated value is escaped unless it
// is itself a fragment made by this module. A page cannot forget to escape a name.
const FRAGMENT = Symbol('html fragment');

export interface Html {
  readonly [FRAGMENT]: true;
  readonly text: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);
}

function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && FRAGMENT in value;
}

type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (isHtml(value)) return value.text;
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let text = strings[0] as string;
  values.forEach((value, index) => { text += render(value) + (strings[index + 1] as string); });
  return { [FRAGMENT]: true, text };
}

/** For markup we wrote ourselves and trust (never for data). */
export function trusted(text: string): Html {
  return { [FRAGMENT]: true, text };
}
