// Engine benchmark: how long a local ERP service takes to start and to stop, measured from the
// API request to the operation's end (by then the service answers, or its port is closed),
// over 10 cycles; and 20 services started at once on one server. Target: start median < 1 s.
import { setTimeout as sleep } from 'node:timers/promises';
import { insertServer } from '../src/db/repositories/servers.js';
import { insertService } from '../src/db/repositories/services.js';
import { startEngineBenchServer } from './support/engine-server.js';

const CYCLES = 10;
const BURST = 20;

/** Flat numbers, so that the runner's summary line shows them; `target` as the runner reads it. */
export interface EngineBenchFigures {
  startMedianMs: number;
  startMaxMs: number;
  stopMedianMs: number;
  stopMaxMs: number;
  burstServices: number;
  burstAllRunningMs: number;
  burstMedianMs: number;
  burstMaxMs: number;
  burstFailed: number;
  target: { startMedianBelowMs: number; met: boolean };
}

const TARGET_START_MEDIAN_MS = 1000;

export default async function engineBench(): Promise<EngineBenchFigures> {
  const bench = await startEngineBenchServer('engine');
  const { app, baseUrl, teamId, token } = bench;
  try {
    const db = app.db.kysely;
    const timed = async (method: string, path: string): Promise<{ ms: number; state: string }> => {
      const started = performance.now();
      const response = await fetch(baseUrl + path, { method, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
      const accepted = (await response.json()) as { id: string };
      if (response.status !== 202) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(accepted)}`);
      for (;;) {
        const poll = await fetch(`${baseUrl}/api/operations/${accepted.id}`, { headers: { Authorization: `Bearer ${token}` } });
        const { state } = (await poll.json()) as { state: string };
        if (state === 'succeeded' || state === 'failed') return { ms: performance.now() - started, state };
        await sleep(5);
      }
    };

    const cycleServer = await insertServer(db, { teamId, name: 'cycles', capacity: 1 });
    const cycled = await insertService(db, { teamId, serverId: cycleServer, name: 'Cycled ERP' });
    const starts: number[] = [];
    const stops: number[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      starts.push(expectSucceeded(await timed('POST', `/api/service-erp/${cycled}/start`)));
      stops.push(expectSucceeded(await timed('POST', `/api/service-erp/${cycled}/stop`)));
    }

    const burstServer = await insertServer(db, { teamId, name: 'burst', capacity: BURST });
    const burstServices: string[] = [];
    for (let index = 0; index < BURST; index++) burstServices.push(await insertService(db, { teamId, serverId: burstServer, name: `Burst ${index}` }));
    const burstStarted = performance.now();
    const burst = await Promise.all(burstServices.map((id) => timed('POST', `/api/service-erp/${id}/start`)));
    const allRunningMs = performance.now() - burstStarted;

    const start = summary(starts);
    const stop = summary(stops);
    const each = summary(burst.map((run) => run.ms));
    const burstFailed = burst.filter((run) => run.state !== 'succeeded').length;
    const figures: EngineBenchFigures = {
      startMedianMs: start.median, startMaxMs: start.max, stopMedianMs: stop.median, stopMaxMs: stop.max,
      burstServices: BURST, burstAllRunningMs: round(allRunningMs), burstMedianMs: each.median, burstMaxMs: each.max, burstFailed,
      target: { startMedianBelowMs: TARGET_START_MEDIAN_MS, met: start.median < TARGET_START_MEDIAN_MS && burstFailed === 0 },
    };
    printReport(figures);
    return figures;
  } finally {
    await bench.close();
  }
}

function expectSucceeded(run: { ms: number; state: string }): number {
  if (run.state !== 'succeeded') throw new Error(`an operation ended ${run.state}`);
  return run.ms;
}

function summary(values: number[]): { median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = sorted.length % 2 === 0 ? ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2 : (sorted[Math.floor(middle)] ?? 0);
  return { median: round(median), max: round(sorted.at(-1) ?? 0) };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function printReport(figures: EngineBenchFigures): void {
  console.log([
    'engine: local ERP services, measured from the API request to the end of the operation',
    `  start -> running   median ${figures.startMedianMs} ms, max ${figures.startMaxMs} ms (${CYCLES} cycles)`,
    `  stop  -> stopped   median ${figures.stopMedianMs} ms, max ${figures.stopMaxMs} ms (${CYCLES} cycles)`,
    `  ${figures.burstServices} services started at once on one server: all running after ${figures.burstAllRunningMs} ms ` +
      `(each: median ${figures.burstMedianMs} ms, max ${figures.burstMaxMs} ms; failed ${figures.burstFailed})`,
    `  target: start median under ${figures.target.startMedianBelowMs} ms: ${figures.target.met ? 'met' : 'NOT met'}`,
  ].join('\n'));
}

// Run directly: node dist/bench/engine.bench.js
if (import.meta.url === `file://${process.argv[1]}`) await engineBench();
