// How long and how hard the load benchmarks run, from the environment (defaults suit two cores).
export function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export function loadSettings() {
  return {
    rounds: Math.round(envNumber('BENCH_ROUNDS', 3)),
    seconds: envNumber('BENCH_SECONDS', 3),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 2),
    connections: Math.round(envNumber('BENCH_CONNECTIONS', 10)),
  };
}
