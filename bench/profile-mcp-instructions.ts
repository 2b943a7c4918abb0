// Instructions per MCP call, counted, not timed: `node dist/bench/profile-mcp-instructions.js
// [side ...]` (sides: rest, legacy, modern, floor-legacy, floor-modern; default legacy and
// floor-legacy; BENCH_WARM calls to warm up, 2,500; BENCH_CALLS counted, 1,000; BENCH_TOP lines
// of functions, 25; BENCH_CACHE_SIM=1 adds callgrind's cache and branch simulation, about three
// times slower). Needs valgrind (Debian's package).
//
// Each side's server runs under callgrind, which counts every instruction the process executes
// (V8's compiled code included) whatever else the machine is doing: on these shared two-core
// machines the same build gives the same count to within about 1%, where CPU time per call moves
// by 10% between runs. The calls are sent one at a time over one connection; after the warm-up
// the counters are zeroed, the counted calls sent, and the counters dumped. It prints, per call,
// the instructions of the main thread and of V8's helper threads (concurrent marking, compiling)
// by kind of work, and, for two sides, the functions whose count differs most (V8's compiled
// functions are named from Node's --perf-basic-prof map). Instructions are not time: a cache miss
// or a mispredicted branch costs many, so two servers with the same count can differ in CPU: the
// simulation counts those (its caches are a model of the machine's, not its own).
// Not a *.bench.js module, so `npm run bench` does not run it. src/mcp/README.md tells what it found.
import { execFileSync, fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { kindOf, namedBy, perfMap, readDump, type CallgrindDump } from './support/callgrind-dump.js';
import { portOnceReady } from './support/child-server.js';
import { PROFILE_SIDES, profileRequestOf, profileServerOf } from './support/profile-sides.js';
import { seedListServices } from './support/seed.js';

const VALGRIND = '/usr/bin/valgrind';
const sides = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['legacy', 'floor-legacy'];
const unknown = sides.filter((side) => !(PROFILE_SIDES as readonly string[]).includes(side));
if (unknown.length > 0) throw new Error(`unknown side ${unknown.join(', ')}: the sides are ${PROFILE_SIDES.join(', ')}`);
if (!existsSync(VALGRIND)) {
  console.error('profile-mcp-instructions needs valgrind: apt-get install -y valgrind');
  process.exit(2);
}
const warm = Number(process.env.BENCH_WARM ?? 2500);
const calls = Number(process.env.BENCH_CALLS ?? 1000);
const top = Number(process.env.BENCH_TOP ?? 25);
const simulate = process.env.BENCH_CACHE_SIM === '1';

interface Counted { side: string; mainThread: Map<string, number>; helpers: Map<string, number>; events: Map<string, number> }

/** Starts `side` under callgrind, sends the calls, and answers its instructions per call by function. */
async function countSide(side: string, dataDir: string, token: string, outDir: string): Promise<Counted> {
  const { script, args } = profileServerOf(side, dataDir);
  const out = join(outDir, side);
  const child = fork(fileURLToPath(new URL(`./servers/${script}`, import.meta.url)), args, {
    execPath: VALGRIND,
    execArgv: ['--tool=callgrind', `--callgrind-out-file=${out}`, '--separate-threads=yes', '--dump-instr=no',
      ...(simulate ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
      // --perf-basic-prof also logs V8's code events: to a file of ours, not an isolate-*.log in the working directory.
      process.execPath, '--perf-basic-prof', `--logfile=${out}-v8.log`, '--no-logfile-per-isolate'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr = (stderr + text).slice(-4000); });
  try {
    const port = await portOnceReady(child, `${side} under valgrind`, 300_000, () => stderr);
    const call = profileRequestOf(side, `http://127.0.0.1:${port}`, token) as { url: string; method?: string; headers?: Record<string, string>; body?: string };
    const agent = new Agent({ connections: 1 });
    const send = async () => {
      const response = await request(call.url, { method: (call.method ?? 'GET') as 'GET', headers: call.headers, body: call.body, dispatcher: agent });
      const body = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${side}: HTTP ${response.statusCode}: ${body.slice(0, 200)}`);
    };
    const control = (option: string) => execFileSync('callgrind_control', [option, String(child.pid)], { stdio: 'pipe' });
    for (let i = 0; i < warm; i++) await send();
    control('--zero');
    for (let i = 0; i < calls; i++) await send();
    control('--dump');
    await agent.close();
    const named = namedBy(perfMap(`/tmp/perf-${child.pid}.map`));
    // With --separate-threads, each thread's dump ends in -01, -02, ...; -01 is the main thread.
    const files = readdirSync(outDir).filter((file) => file.startsWith(`${side}.`) && /-\d+$/.test(file));
    if (files.length === 0) throw new Error(`${side}: callgrind wrote no dump (${stderr})`);
    const dumps = files.map((file) => ({ mainThread: file.endsWith('-01'), ...readDump(join(outDir, file)) }));
    const perCall = (threads: CallgrindDump[]) => {
      const total = new Map<string, number>();
      for (const { self } of threads) {
        for (const [name, count] of self) {
          const label = named(name);
          total.set(label, (total.get(label) ?? 0) + count / calls);
        }
      }
      return total;
    };
    const events = new Map<string, number>();
    for (const { totals } of dumps) for (const [event, total] of totals) events.set(event, (events.get(event) ?? 0) + total / calls);
    return { side, mainThread: perCall(dumps.filter((dump) => dump.mainThread)), helpers: perCall(dumps.filter((dump) => !dump.mainThread)), events };
  } finally {
    child.kill('SIGKILL');
    rmSync(`/tmp/perf-${child.pid}.map`, { force: true });
  }
}

const sum = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);
const thousands = (value: number) => `${(value / 1000).toFixed(1)}K`;

function byKind(counts: Map<string, number>): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const [name, count] of counts) kinds.set(kindOf(name), (kinds.get(kindOf(name)) ?? 0) + count);
  return kinds;
}

const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-profile-instructions-'));
const outDir = join(dataDir, 'callgrind');
try {
  const fixture = await seedListServices(dataDir);
  mkdirSync(outDir);
  const counted: Counted[] = [];
  for (const side of sides) {
    counted.push(await countSide(side, dataDir, fixture.token, outDir));
    const last = counted[counted.length - 1]!;
    console.log(`${side}: ${thousands(sum(last.mainThread) + sum(last.helpers))} instructions a call (main thread ${thousands(sum(last.mainThread))}, helper threads ${thousands(sum(last.helpers))}), ${calls} calls after ${warm}`);
    for (const [kind, count] of [...byKind(last.mainThread)].sort((a, b) => b[1] - a[1])) console.log(`  ${thousands(count).padStart(8)}  ${kind}`);
    if (simulate) {
      const event = (name: string) => last.events.get(name) ?? 0;
      console.log(`  all threads, a call: ${thousands(event('I1mr'))} instruction cache misses, ${thousands(event('D1mr') + event('D1mw'))} data cache misses, ` +
        `${thousands(event('ILmr') + event('DLmr') + event('DLmw'))} last-level misses, ${thousands(event('Bcm') + event('Bim'))} mispredicted branches`);
    }
  }
  if (counted.length === 2) {
    const [a, b] = counted as [Counted, Counted];
    console.log(`\n${a.side}/${b.side}, instructions a call: main thread ${(sum(a.mainThread) / sum(b.mainThread)).toFixed(3)}, all threads ${((sum(a.mainThread) + sum(a.helpers)) / (sum(b.mainThread) + sum(b.helpers))).toFixed(3)}`);
    const names = new Set([...a.mainThread.keys(), ...b.mainThread.keys()]);
    const differences = [...names].map((name) => ({ name, a: a.mainThread.get(name) ?? 0, b: b.mainThread.get(name) ?? 0 }))
      .sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b)).slice(0, top);
    console.log(`main thread, the ${top} functions whose count differs most (instructions a call: ${a.side}, ${b.side}, difference):`);
    for (const { name, a: countA, b: countB } of differences) {
      console.log(`${countA.toFixed(0).padStart(8)} ${countB.toFixed(0).padStart(8)} ${(countA - countB >= 0 ? '+' : '') + (countA - countB).toFixed(0).padStart(7)}  ${name.slice(0, 120)}`);
    }
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
