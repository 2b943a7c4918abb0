// Reads a callgrind dump (valgrind's callgrind format) into instructions per function, and names
// the functions V8 compiled at run time from the perf map Node writes with --perf-basic-prof
// (callgrind knows them only by address). For profile-mcp-instructions.ts.
import { existsSync, readFileSync } from 'node:fs';

export interface CallgrindDump {
  /** Instructions executed in each function itself (not in what it called), by name. */
  self: Map<string, number>;
  /** The totals by event (Ir, and with --cache-sim and --branch-sim the misses and mispredictions). */
  totals: Map<string, number>;
}

export function readDump(dumpFile: string): CallgrindDump {
  const text = readFileSync(dumpFile, 'utf8');
  const names = new Map<string, string>();
  const self = new Map<string, number>();
  let current = '?';
  let costIsCall = false;
  // "fn=(12) name" defines a compressed name, "fn=(12)" reuses it.
  const nameOf = (field: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(field);
    if (!match) return field;
    if (match[2] !== undefined) names.set(match[1]!, match[2]);
    return names.get(match[1]!) ?? '?';
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) {
      current = nameOf(line.slice(3));
      costIsCall = false;
    } else if (line.startsWith('cfn=')) {
      nameOf(line.slice(4));
    } else if (line.startsWith('calls=')) {
      // The next cost line is the callee's inclusive cost, not this function's own.
      costIsCall = true;
    } else if (/^[0-9+\-*]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (costIsCall) costIsCall = false;
      else self.set(current, (self.get(current) ?? 0) + cost);
    }
  }
  const events = /^events: (.*)$/m.exec(text)?.[1]?.split(' ') ?? [];
  const summary = /^summary: (.*)$/m.exec(text)?.[1]?.split(' ').map(Number) ?? [];
  return { self, totals: new Map(events.map((event, index) => [event, summary[index] ?? 0])) };
}

interface CodeRange { start: number; end: number; name: string }

/** The code V8 generated, from /tmp/perf-<pid>.map ("start size name" in hex). */
export function perfMap(file: string): CodeRange[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [start, size, ...name] = line.split(' ');
    return { start: parseInt(start!, 16), end: parseInt(start!, 16) + parseInt(size!, 16), name: name.join(' ') };
  }).sort((a, b) => a.start - b.start);
}

/** `name`, or for an address callgrind could not name, the JavaScript function whose code holds it. */
export function namedBy(ranges: readonly CodeRange[]): (name: string) => string {
  return (name) => {
    // A recursive call shows as "0x...'2".
    const address = /^0x([0-9a-f]+)(?:'\d+)?$/.exec(name);
    if (!address) return name;
    const at = parseInt(address[1]!, 16);
    let low = 0;
    let high = ranges.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const range = ranges[middle]!;
      if (at < range.start) high = middle - 1;
      else if (at >= range.end) low = middle + 1;
      else return `JS ${range.name}`;
    }
    return 'JS (code not in the map)';
  };
}

/** A coarse kind of work, to compare two servers at a glance. */
export function kindOf(name: string): string {
  if (name.startsWith('JS ')) return 'JavaScript (compiled by V8)';
  if (name.startsWith('Builtins_')) return "V8's builtins";
  if (/JsonStringifier|JsonParser/.test(name)) return 'JSON';
  if (/Scaveng|Marking|Sweep|Heap::|MarkCompact|Evacuat|SizeFromMap|MarkingWorklists/.test(name)) return 'garbage collection';
  if (/^sqlite3|^vdbe|^btree|^Data::|^Statement::|^pcache|^whereLoop|^resolve|^tokenExpr/.test(name)) return 'SQLite';
  if (/malloc|free|memcpy|memmove|memset|memcmp/.test(name)) return 'C memory';
  if (/^v8::internal::compiler|^v8::internal::maglev|Turbofan|Maglev/.test(name)) return "V8's compilers";
  return 'other native (V8 runtime, Node, libuv, kernel entry)';
}
