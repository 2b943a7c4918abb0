// "Expires on" is a date: the token works until the end of that day in the team's time zone.
// Comparing today's date in that zone with the stored date is exact, including across DST.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    // en-CA formats as YYYY-MM-DD.
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

export function dateInTimeZone(instant: Date, timeZone: string): string {
  return formatterFor(timeZone).format(instant);
}

// Every time zone's offset lies between UTC-12 and UTC+14, so the end of a day anywhere falls
// within 14 hours before and 12 hours after the end of that day in UTC. Outside that window the
// answer needs no time zone: most checks then skip Intl, whose first use of a zone loads its
// data (tens of milliseconds, felt by every `teaminfra mcp` start).
const EARLIEST_OFFSET_MS = 14 * 3600_000;
const LATEST_OFFSET_MS = 12 * 3600_000;

export function isExpired(expiresOn: string | null, timeZone: string, now: Date = new Date()): boolean {
  if (expiresOn === null) return false;
  const endOfDayUtc = Date.parse(`${expiresOn}T00:00:00Z`) + 24 * 3600_000;
  const at = now.getTime();
  if (at < endOfDayUtc - EARLIEST_OFFSET_MS) return false;
  if (at >= endOfDayUtc + LATEST_OFFSET_MS) return true;
  return dateInTimeZone(now, timeZone) > expiresOn;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

export function isValidDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value);
}
