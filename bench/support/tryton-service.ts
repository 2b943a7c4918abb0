// What the Tryton benchmarks (tryton.bench.ts, move.bench.ts) share: parties made through
// Tryton's JSON-RPC, the docker command and a shell pipeline run as an operator would, a url
// polled until it answers, and the removal of what a bench's server left on an engine.
import { execFileSync, spawn } from 'node:child_process';
import type { DockerApi } from '../../src/engine/docker/docker-api.js';
import { LABEL, labelFilter } from '../../src/engine/docker/labels.js';

/** `count` parties made through JSON-RPC as the admin, a thousand per call. */
export async function fillParties(url: string, password: string, count: number): Promise<void> {
  const rpc = async (method: string, params: unknown[], session?: string) => {
    const response = await fetch(`${url}/tryton/`, {
      method: 'POST', signal: AbortSignal.timeout(600_000),
      headers: { 'content-type': 'application/json', ...(session ? { authorization: `Session ${session}` } : {}) },
      body: JSON.stringify({ id: 1, method, params }),
    });
    const body = (await response.json()) as { result?: unknown; error?: unknown };
    if (response.status !== 200 || body.error) throw new Error(`${method} answered ${response.status}: ${JSON.stringify(body.error)}`);
    return body.result;
  };
  const [userId, key] = (await rpc('common.db.login', ['admin', { password }, 'en'])) as [number, string];
  const session = Buffer.from(`admin:${userId}:${key}`).toString('base64');
  for (let first = 0; first < count; first += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, count - first) }, (_, index) => ({ name: `Party ${first + index}` }));
    await rpc('model.party.party.create', [batch, {}], session);
  }
}

/** The docker command (`-H host` first for another engine than this machine's). */
export function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function shell(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -eo pipefail; ${command}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => { errors += chunk; });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${errors.slice(-500)}`))));
  });
}

export async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** Everything the bench made on an engine for one server (what carries its label). */
export async function removeEverythingOf(api: DockerApi, serverId: string): Promise<void> {
  const filters = labelFilter({ [LABEL.serverId]: serverId });
  const containers = await api.json<{ Id: string }[]>('GET', '/containers/json', { query: { all: 1, filters } });
  for (const container of containers) await api.json('DELETE', `/containers/${container.Id}`, { query: { force: 1 }, accept: [404] });
  const volumes = (await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
  for (const volume of volumes) await api.json('DELETE', `/volumes/${volume.Name}`, { accept: [404] });
  const networks = await api.json<{ Id: string }[]>('GET', '/networks', { query: { filters } });
  for (const network of networks) await api.json('DELETE', `/networks/${network.Id}`, { accept: [404] });
}
