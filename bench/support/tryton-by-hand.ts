// What the Tryton benchmarks (tryton.bench.ts, move.bench.ts, the recovery in offsite.bench.ts) do besides the
// API: a service filled with parties through JSON-RPC, and the engine's and PostgreSQL's own tools
// run by hand (the docker CLI, a shell pipeline), against which the API's steps are measured.
import { execFileSync, spawn } from 'node:child_process';
import type { AppDefinition } from '../../src/engine/apps/app-definition.js';
import type { DockerApi } from '../../src/engine/docker/docker-api.js';
import { LABEL, labelFilter } from '../../src/engine/docker/labels.js';

/** `count` parties made through JSON-RPC as the admin, a thousand per call. */
export async function fillParties(url: string, password: string, count: number): Promise<void> {
  const session = await adminSession(url, password);
  for (let first = 0; first < count; first += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, count - first) }, (_, index) => ({ name: `Party ${first + index}` }));
    await trytonRpc(url, 'model.party.party.create', [batch, {}], session);
  }
}

async function trytonRpc(url: string, method: string, params: unknown[], session?: string): Promise<unknown> {
  const response = await fetch(`${url}/tryton/`, {
    method: 'POST', signal: AbortSignal.timeout(600_000),
    headers: { 'content-type': 'application/json', ...(session ? { authorization: `Session ${session}` } : {}) },
    body: JSON.stringify({ id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  if (response.status !== 200 || body.error) throw new Error(`${method} answered ${response.status}: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function adminSession(url: string, password: string): Promise<string> {
  const [userId, key] = (await trytonRpc(url, 'common.db.login', ['admin', { password }, 'en'])) as [number, string];
  return Buffer.from(`admin:${userId}:${key}`).toString('base64');
}

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

/** Everything on the engine labelled with `serverId`: containers, volumes, networks. */
export async function removeEverythingOf(api: DockerApi, serverId: string): Promise<void> {
  const filters = labelFilter({ [LABEL.serverId]: serverId });
  const containers = await api.json<{ Id: string }[]>('GET', '/containers/json', { query: { all: 1, filters } });
  for (const container of containers) await api.json('DELETE', `/containers/${container.Id}`, { query: { force: 1 }, accept: [404] });
  const volumes = (await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
  for (const volume of volumes) await api.json('DELETE', `/volumes/${volume.Name}`, { accept: [404] });
  const networks = await api.json<{ Id: string }[]>('GET', '/networks', { query: { filters } });
  for (const network of networks) await api.json('DELETE', `/networks/${network.Id}`, { accept: [404] });
}

/** Why a Tryton benchmark cannot run on the engine at `host` (it does not answer, or lacks an image of the app), or null. */
export async function trytonUnavailable(api: DockerApi, host: string, tryton: AppDefinition): Promise<string | null> {
  try {
    await api.ping(2_000);
  } catch {
    return `no Docker engine answers at ${host} (start dockerd, or set TEAMINFRA_BENCH_DOCKER_HOST)`;
  }
  for (const image of new Set(tryton.containers.map((container) => container.image))) {
    if (!(await api.json<object | undefined>('GET', `/images/${encodeURIComponent(image)}/json`, { accept: [404] }))) {
      return `the image ${image} is not on the engine (teaminfra admin build-app-images --app tryton)`;
    }
  }
  return null;
}

/** How many parties the Tryton service at `url` holds, asked as its admin. */
export async function partyCount(url: string, password: string): Promise<number> {
  const session = await adminSession(url, password);
  return (await trytonRpc(url, 'model.party.party.search_count', [[], {}], session)) as number;
}
