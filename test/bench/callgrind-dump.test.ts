// What profile-mcp-instructions.ts reads from callgrind: in one read of a dump, each function's own
// instructions (not those of what it called) and the totals by event; and V8's compiled functions
// named from Node's perf map. The dump below is written as callgrind writes one (compressed names,
// a call's cost after its `calls=` line).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kindOf, namedBy, perfMap, readDump } from '../../bench/support/callgrind-dump.js';

const directory = mkdtempSync(join(tmpdir(), 'teaminfra-callgrind-dump-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const DUMP = `# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir I1mr
summary: 1160 7

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) main
0 100 1
cfn=(2) Builtins_LoadIC
calls=3 0
0 900 5
fn=(2)
0 300 2
0 600 3
ob=(2)
fl=(2)
fn=(3) 0x0000000028261500
0 40
fn=(4) 0x0000000028261500'2
0 20
`;

describe('reading a callgrind dump', () => {
  it("counts each function's own instructions, not what it called", () => {
    const file = join(directory, 'dump');
    writeFileSync(file, DUMP);
    const { self } = readDump(file);
    expect(self.get('main')).toBe(100);
    // Named once as "(2) Builtins_LoadIC" on a cfn= line, then used as "(2)".
    expect(self.get('Builtins_LoadIC')).toBe(900);
    expect([...self.values()].reduce((a, b) => a + b, 0)).toBe(1060);
  });

  it('reads the totals of each event', () => {
    const file = join(directory, 'dump');
    writeFileSync(file, DUMP);
    expect(Object.fromEntries(readDump(file).totals)).toEqual({ Ir: 1160, I1mr: 7 });
  });

  it("names V8's compiled code from the perf map, recursive calls included", () => {
    const map = join(directory, 'perf.map');
    writeFileSync(map, '28261400 200 JS:*listServices file:///srv/list.js:3:1\n28262000 10 JS:~other file:///srv/b.js:1:1\n');
    const named = namedBy(perfMap(map));
    expect(named('0x0000000028261500')).toBe('JS JS:*listServices file:///srv/list.js:3:1');
    expect(named("0x0000000028261500'2")).toBe('JS JS:*listServices file:///srv/list.js:3:1');
    expect(named('0x0000000028261700')).toBe('JS (code not in the map)');
    expect(named('sqlite3VdbeExec')).toBe('sqlite3VdbeExec');
    expect(perfMap(join(directory, 'absent.map'))).toEqual([]);
  });

  it('sorts functions into kinds of work', () => {
    expect(kindOf('JS JS:*f file:///a.js:1:1')).toBe('JavaScript (compiled by V8)');
    expect(kindOf('Builtins_LoadIC')).toBe("V8's builtins");
    expect(kindOf('bool v8::internal::JsonStringifier::SerializeString<false>()')).toBe('JSON');
    expect(kindOf('sqlite3VdbeExec')).toBe('SQLite');
    expect(kindOf('v8::internal::Scavenger::ScavengeObject()')).toBe('garbage collection');
    expect(kindOf('__memcpy_avx_unaligned_erms')).toBe('C memory');
  });
});
