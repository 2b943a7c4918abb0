// Load with autocannon. A measurement is one or more samples (runs) of one server; figures pool
// them. Latency percentiles come from autocannon's per-response timings (sub-millisecond),
// because its own histogram records whole milliseconds, too coarse at these speeds.
import autocannon from 'autocannon';

export interface Target {
  url: string;
  headers?: Record<string, string>;
  connections: number;
}

export interface Sample {
  ok: number;
  /** CPU time the server used during the sample, when known. */
  serverCpuMicros?: number;
  seconds: number;
  latencies: Float64Array;
  non2xx: number;
  errors: number;
}

export interface LoadFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  seconds: number;
  /** Server CPU time per answered request (user + system), in microseconds. */
  serverCpuMicrosPerRequest: number;
  /** req/s of each sample, to show the spread. */
  perSample: number[];
}

/** One autocannon run; `keepLatencies` false for warm-ups; `cpu` reads the server's CPU time. */
export async function sample(target: Target, seconds: number, keepLatencies = true, cpu?: () => Promise<number>): Promise<Sample> {
  const cpuBefore = await cpu?.();
  const instance = autocannon({ url: target.url, headers: target.headers ?? {}, connections: target.connections, duration: seconds });
  const latencies: number[] = [];
  let ok = 0;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) {
      ok++;
      if (keepLatencies) latencies.push(ms);
    }
  });
  const result = await instance;
  const cpuAfter = await cpu?.();
  return {
    ok, seconds: result.duration, latencies: Float64Array.from(latencies), non2xx: result.non2xx, errors: result.errors,
    ...(cpuBefore !== undefined && cpuAfter !== undefined ? { serverCpuMicros: cpuAfter - cpuBefore } : {}),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function pool(samples: Sample[]): LoadFigures {
  const size = samples.reduce((total, s) => total + s.latencies.length, 0);
  const all = new Float64Array(size);
  let offset = 0;
  for (const s of samples) { all.set(s.latencies, offset); offset += s.latencies.length; }
  all.sort();
  const requests = samples.reduce((total, s) => total + s.ok, 0);
  const seconds = samples.reduce((total, s) => total + s.seconds, 0);
  return {
    requestsPerSecond: requests / seconds,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    meanMs: size ? all.reduce((total, value) => total + value, 0) / size : NaN,
    requests,
    non2xx: samples.reduce((total, s) => total + s.non2xx, 0),
    errors: samples.reduce((total, s) => total + s.errors, 0),
    seconds,
    serverCpuMicrosPerRequest: samples.every((s) => s.serverCpuMicros !== undefined)
      ? samples.reduce((total, s) => total + s.serverCpuMicros!, 0) / requests : NaN,
    perSample: samples.map((s) => Math.round(s.ok / s.seconds)),
  };
}

/** Warm-up (figures discarded), then one measured sample. */
export async function measure(target: Target, warmupSeconds: number, seconds: number): Promise<LoadFigures> {
  if (warmupSeconds > 0) await sample(target, warmupSeconds, false);
  return pool([await sample(target, seconds)]);
}
