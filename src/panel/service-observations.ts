// What a service's engine says of it, as the service page shows it: its metrics, or the sentence of
// a refusal when the engine does not answer (also for its logs).
import type { ServiceMetrics } from '../core/service-observer.js';
import { ObserverRefusal } from '../core/service-observer.js';
import { html, type Html } from './html.js';

/** What the observer answered, or the sentence of its refusal (an engine that does not answer). */
export async function observed<T>(read: () => Promise<T> | undefined): Promise<T | { refusal: string }> {
  try {
    const value = await read();
    return value ?? { refusal: 'This server runs without an engine.' };
  } catch (error) {
    if (error instanceof ObserverRefusal) return { refusal: error.reason };
    throw error;
  }
}

export function metricsTable(metrics: ServiceMetrics | { refusal: string }): Html {
  if (!('running' in metrics)) return html`<p class="error">${metrics.refusal}</p>`;
  const summary = metricsSummary(metrics);
  return html`<table class="facts">${Object.entries(summary).map(([label, value]) => html`<tr><th>${label}</th><td data-metric="${label}">${value}</td></tr>`)}</table>`;
}

/** The metrics as the page shows them, label to text; the script replaces each cell by its label. */
export function metricsSummary(metrics: ServiceMetrics): Record<string, string> {
  const bytes = (value: number | null) => (value === null ? '—' : value >= 1_048_576 ? `${(value / 1_048_576).toFixed(1)} MiB` : `${Math.round(value / 1024)} KiB`);
  return {
    Running: metrics.running ? 'yes' : 'no',
    Uptime: metrics.uptime_seconds === null ? '—' : duration(metrics.uptime_seconds),
    Restarts: metrics.restarts === null ? '—' : String(metrics.restarts),
    CPU: metrics.cpu ? `${metrics.cpu.percent}% of one core (last ${Math.round(metrics.cpu.window_seconds)} s)` : '—',
    Memory: metrics.memory_bytes === null ? '—' : `${bytes(metrics.memory_bytes)} of ${bytes(metrics.memory_limit_bytes)}`,
    Data: bytes(metrics.data_bytes),
  };
}

function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  return seconds < 172_800 ? `${Math.floor(seconds / 3600)} h` : `${Math.floor(seconds / 86_400)} days`;
}
