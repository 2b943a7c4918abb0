// CPU use over the last minute, measured honestly: an engine or /proc gives only the CPU time a
// process has used since it started, so the percentage is the difference between two readings
// divided by the time between them. Each reading is kept for a minute, so a service looked at
// again (the panel refreshes it) is measured over up to the last 60 s; the first look has no
// earlier reading and takes a second one a second later. The answer says which window it measured.
import { setTimeout as sleep } from 'node:timers/promises';

const WINDOW_MS = 60_000;
/** The shortest window measured: shorter, the clock's resolution and the engine's sampling dominate. */
const SHORTEST_MS = 1_000;
/** Readings kept at most, so that a service looked at many times a second costs little. */
const KEPT = 64;

export interface CpuReading {
  /** When it was read, in ms. */
  at: number;
  /** CPU time used since the process or container started, in ns. */
  usedNs: number;
}

export class CpuWindows {
  private readonly readings = new Map<string, CpuReading[]>();

  /**
   * The percent of one core used by `key` (a container's id, a process's id and start), from
   * `read()` now and the oldest reading of the last minute; read again after a second when there is none.
   */
  async percentOf(key: string, read: () => Promise<CpuReading | null>): Promise<{ percent: number; window_seconds: number } | null> {
    const first = await read();
    if (!first) return null;
    const measured = this.record(key, first);
    if (measured) return measured;
    await sleep(SHORTEST_MS);
    const second = await read();
    return second ? this.record(key, second) : null;
  }

  private record(key: string, reading: CpuReading): { percent: number; window_seconds: number } | null {
    this.forgetOld(reading.at);
    const kept = (this.readings.get(key) ?? []).filter((earlier) => earlier.usedNs <= reading.usedNs && earlier.at < reading.at);
    const baseline = kept.find((earlier) => reading.at - earlier.at >= SHORTEST_MS);
    kept.push(reading);
    this.readings.set(key, kept.slice(-KEPT));
    if (!baseline) return null;
    const elapsedMs = reading.at - baseline.at;
    const percent = ((reading.usedNs - baseline.usedNs) / (elapsedMs * 1e6)) * 100;
    return { percent: Math.round(percent * 10) / 10, window_seconds: Math.round(elapsedMs / 100) / 10 };
  }

  private forgetOld(now: number): void {
    for (const [key, readings] of this.readings) {
      const recent = readings.filter((reading) => now - reading.at <= WINDOW_MS);
      if (recent.length === 0) this.readings.delete(key);
      else this.readings.set(key, recent);
    }
  }
}
