// The known key an unknown one was most likely meant to be, so that a typo in a definition
// ("healtcheck") gets "did you mean "healthcheck"?" rather than only "remove it", which would
// have the author delete the healthcheck they meant to keep.

/** The known key within a typo's reach of `given` (one edit for a name of up to four letters, two otherwise), or null. */
export function nearestKey(given: string, known: readonly string[]): string | null {
  const reach = given.length <= 4 ? 1 : 2;
  let nearest: string | null = null;
  let best = reach + 1;
  for (const candidate of known) {
    const distance = editDistance(given.toLowerCase(), candidate.toLowerCase());
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  return nearest;
}

/** Insertions, deletions, substitutions and swaps of two neighbours (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}
