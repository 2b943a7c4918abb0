// The part of autocannon's API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    headers?: Record<string, string>;
    method?: string;
    timeout?: number;
    /** Requests per second across all connections, at most: a fixed rate instead of as many as answered. */
    overallRate?: number;
    /** Each connection sends these in turn, round and round. */
    requests?: { method?: string; path: string; headers?: Record<string, string>; body?: string }[];
  }

  export interface Histogram {
    average: number; mean: number; stddev: number; min: number; max: number; total: number;
    p50: number; p90: number; p99: number; p99_9?: number; sent?: number;
  }

  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  export default function autocannon(options: Options): Instance;
}
