// Wall-clock time in a team's time zone (IANA name, teams.timezone), with nothing but Intl:
// which local day, week and month an instant falls in, and which instant a local time names.

export interface LocalParts { year: number; month: number; day: number; hour: number; minute: number }

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** True for a time zone Intl knows (an unknown one would throw at the first slot). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

export function localParts(instant: number, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const part of formatFor(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute! };
}

/** The zone's offset from UTC at `instant`, in ms (local = UTC + offset). */
function offsetAt(instant: number, timeZone: string): number {
  const p = localParts(instant, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - Math.floor(instant / 60_000) * 60_000;
}

/**
 * The instant at which the zone's clocks show this local time. A time skipped by a daylight-saving
 * change comes out an hour later; a time shown twice, the first of the two.
 */
export function instantOf(local: LocalParts, timeZone: string): number {
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  let guess = asUtc - offsetAt(asUtc, timeZone);
  guess = asUtc - offsetAt(guess, timeZone);
  return guess;
}

/** The local calendar day of an instant: "YYYY-MM-DD". */
export function dayKey(instant: number, timeZone: string): string {
  const p = localParts(instant, timeZone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

export function monthKey(instant: number, timeZone: string): string {
  const p = localParts(instant, timeZone);
  return `${p.year}-${pad(p.month)}`;
}

/** The ISO week (Monday first) of the local day of an instant: "YYYY-Www". */
export function weekKey(instant: number, timeZone: string): string {
  const p = localParts(instant, timeZone);
  const date = new Date(Date.UTC(p.year, p.month - 1, p.day));
  const weekday = date.getUTCDay() || 7;
  date.setUTCDate(date.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((date.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${date.getUTCFullYear()}-W${pad(week)}`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
