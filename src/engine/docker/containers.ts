// Containers and volumes of one engine, always selected by our labels: list a service's
// containers, start one (on a port the engine picks), wait for its health check from outside (as
// its users will reach it), stop, remove, and run short-lived helper containers that move a
// service's data. Creating a service's containers is app-containers.ts'.
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { DriverError } from '../driver.js';
import { isLeaseOwnerGone, newLeaseOwner } from '../lease-owner.js';
import { quotableOutput } from '../redact-secrets.js';
import { DockerError, type DockerApi } from './docker-api.js';
import { LABEL, labelFilter, labelsOf } from './labels.js';

export interface ContainerSummary {
  id: string;
  name: string;
  running: boolean;
  revision: number;
  volume: string;
  /** The host port its contract port is published on, while it runs. */
  port: number | null;
}

interface ListedContainer {
  Id: string; Names: string[]; State: string; Labels: Record<string, string>;
  Ports: { PrivatePort: number; PublicPort?: number; Type: string }[];
}

export async function listServiceContainers(api: DockerApi, serviceId: string, role: 'service' | 'helper' = 'service'): Promise<ContainerSummary[]> {
  const listed = await api.json<ListedContainer[]>('GET', '/containers/json', {
    query: { all: 1, filters: labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.role]: role }) },
  });
  return listed.map((container) => ({
    id: container.Id, name: (container.Names[0] ?? '').replace(/^\//, ''), running: container.State === 'running',
    revision: Number(container.Labels[LABEL.revision] ?? 0), volume: container.Labels[LABEL.volume] ?? '',
    port: container.Ports.find((port) => port.PublicPort !== undefined)?.PublicPort ?? null,
  }));
}

/** Starts it; a published port that another program holds is reported as such. */
export async function startContainer(api: DockerApi, id: string): Promise<void> {
  try {
    await api.json('POST', `/containers/${id}/start`, { accept: [304] });
  } catch (error) {
    if (error instanceof DockerError && /port is already allocated|address already in use/i.test(error.reason)) throw new PortTaken(error.reason);
    throw error;
  }
}

export class PortTaken extends Error {}

/**
 * A container published on `port` (or, when null, on a port `choosePort` gives), started: the
 * one `existingId` names, else one `create` makes for the port. While another program holds the
 * port, a new container on a new port (the url changes), at most five times. Answers the
 * container and the host port the engine published.
 */
export async function startPublished(api: DockerApi, options: {
  existingId: string | undefined; port: number | null; containerPort: number;
  choosePort(): Promise<number>; portAssigned(port: number): Promise<void>; create(port: number): Promise<string>;
}): Promise<{ id: string; published: number }> {
  let id = options.existingId;
  let { port } = options;
  for (let attempt = 0; ; attempt++) {
    if (id === undefined) {
      port ??= await options.choosePort();
      await options.portAssigned(port);
      id = await options.create(port);
    }
    try {
      await startContainer(api, id);
      break;
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 4) throw error;
      await removeContainer(api, id);
      id = undefined;
      port = null;
    }
  }
  const inspected = await api.json<{ NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } }>('GET', `/containers/${id}/json`);
  return { id, published: Number(inspected.NetworkSettings.Ports[`${options.containerPort}/tcp`]?.[0]?.HostPort ?? port) };
}

/** Starts a revision's container published on a port the engine picks, and answers that port (a new one at each start). */
export async function startOnEnginePort(api: DockerApi, id: string, containerPort: number): Promise<number> {
  await startContainer(api, id);
  const inspected = await api.json<{ NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } }>('GET', `/containers/${id}/json`);
  const port = Number(inspected.NetworkSettings.Ports[`${containerPort}/tcp`]?.[0]?.HostPort);
  if (Number.isInteger(port) && port > 0) return port;
  // An exited container has no published port: what it said on its way out is the reason.
  const state = await containerPid(api, id);
  if (!state.running) throw new DriverError(`The container exited (code ${state.exitCode}) before answering its health check${await lastOutput(api, id)}.`);
  throw new DriverError(`The engine published no port for the container's port ${containerPort}.`);
}

/** Once it answers: a service the team runs comes back with its engine (a reboot); one it stopped stays stopped. */
export async function keepRunning(api: DockerApi, id: string): Promise<void> {
  await api.json('POST', `/containers/${id}/update`, { body: { RestartPolicy: { Name: 'unless-stopped' } } });
}

export async function stopContainer(api: DockerApi, id: string, graceMs: number): Promise<void> {
  await api.json('POST', `/containers/${id}/stop`, { query: { t: Math.ceil(graceMs / 1000) }, accept: [304, 404], timeoutMs: graceMs + api.defaultTimeoutMs });
}

export async function removeContainer(api: DockerApi, id: string): Promise<void> {
  await api.json('DELETE', `/containers/${id}`, { query: { force: 1, v: 0 }, accept: [404] });
}

/** `running` is false for a container that exited, even while its restart policy brings it back: it crashed. */
export async function containerPid(api: DockerApi, id: string): Promise<{ pid: number; running: boolean; exitCode: number }> {
  const inspected = await api.json<{ State: { Pid: number; Running: boolean; Restarting: boolean; ExitCode: number }; RestartCount: number } | undefined>(
    'GET', `/containers/${id}/json`, { accept: [404] });
  const crashed = (inspected?.State.Restarting ?? false) || (inspected?.RestartCount ?? 0) > 0;
  return { pid: inspected?.State.Pid ?? 0, running: (inspected?.State.Running ?? false) && !crashed, exitCode: inspected?.State.ExitCode ?? 0 };
}

/** True once `http://host:port<healthPath>` answers 2xx. */
export async function answersHealth(host: string, port: number, path: string, serviceId: string, timeoutMs = 1_000): Promise<boolean> {
  try {
    const response = await request(`http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`, {
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) return false;
    // The bundled image says whose it is: an answer from another service's leftover port is not ours.
    const claimed = /"service_id"\s*:\s*"([^"]+)"/.exec(text)?.[1];
    return claimed === undefined || claimed === serviceId;
  } catch {
    return false;
  }
}

/**
 * Waits until the container answers its health check; fails with its last output if it exits or
 * never answers. The health path is asked every 20 ms (the local driver's pace: a start is over
 * as soon as the service answers), the engine whether the container still runs every 200 ms.
 */
export async function waitHealthy(
  api: DockerApi, id: string, target: { host: string; port: number; path: string; serviceId: string }, timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    if (await answersHealth(target.host, target.port, target.path, target.serviceId)) {
      const state = await containerPid(api, id);
      if (state.running) return state.pid;
    }
    if (attempt % 10 === 0) {
      const state = await containerPid(api, id);
      if (!state.running) {
        throw new DriverError(`The container exited (code ${state.exitCode}) before answering its health check${await lastOutput(api, id)}.`);
      }
    }
    if (Date.now() > deadline) {
      throw new DriverError(`The container did not answer its health check (GET ${target.path} on port ${target.port}) within ` +
        `${timeoutMs} ms${await lastOutput(api, id)}.`);
    }
    await sleep(20);
  }
}

/**
 * "; its last output was ..." from the container's log, or nothing. The line is quoted whole
 * (quotableOutput): the router takes its secrets out and only then cuts it (publicReason).
 */
export async function lastOutput(api: DockerApi, id: string): Promise<string> {
  try {
    const log = await api.stream('GET', `/containers/${id}/logs`, { query: { stdout: 1, stderr: 1, tail: 5 }, timeoutMs: 5_000 });
    const chunks: Buffer[] = [];
    for await (const chunk of log) chunks.push(chunk as Buffer);
    const line = demultiplex(Buffer.concat(chunks)).trim().split('\n').filter(Boolean).pop();
    return line ? `; its last output was "${quotableOutput(line)}"` : '';
  } catch {
    return '';
  }
}

/** Docker's log stream without a TTY: frames of an 8-byte header (stream, size) and the bytes. */
export function demultiplex(buffer: Buffer): string {
  let text = '';
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const size = buffer.readUInt32BE(offset + 4);
    text += buffer.subarray(offset + 8, offset + 8 + size).toString('utf8');
    offset += 8 + size;
  }
  return text;
}

export async function ensureVolume(api: DockerApi, name: string, labels: Record<string, string>): Promise<void> {
  const existing = await api.json<{ Labels: Record<string, string> | null } | undefined>('GET', `/volumes/${name}`, { accept: [404] });
  if (existing) {
    if (existing.Labels?.[LABEL.role] === undefined) throw new DriverError(`A volume named ${name} that teaminfra did not create exists on the engine; rename or remove it.`);
    return;
  }
  await api.json('POST', '/volumes/create', { body: { Name: name, Labels: labels } });
}

export async function removeVolume(api: DockerApi, name: string): Promise<void> {
  await api.json('DELETE', `/volumes/${name}`, { accept: [404] });
}

export async function listVolumes(api: DockerApi, labels: Record<string, string>): Promise<string[]> {
  const listed = await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters: labelFilter(labels) } });
  return (listed.Volumes ?? []).map((volume) => volume.Name);
}

/** Names this process on the helpers it makes; never retired, since the process lives as long as its helpers. */
const THIS_PROCESS = newLeaseOwner();

/**
 * A helper container of the service's image with the given volumes mounted, created but not
 * started: `runHelper` runs its `command`; without one it only serves archive transfers.
 * It runs as the image's own user, so that what its command writes belongs to that user, as
 * the application's own files do; `asRoot` is for commands that act on files any image's
 * helper put there (removing backup files). The caller removes it with `remove`.
 */
export async function createHelper(
  api: DockerApi,
  options: { image: string; serviceId: string; serverId: string; mounts: { volume: string; at: string }[]; command?: string[]; asRoot?: boolean },
): Promise<{ id: string; remove(): Promise<void> }> {
  const created = await api.json<{ Id: string }>('POST', '/containers/create', {
    body: {
      Image: options.image, Labels: labelsOf({ serviceId: options.serviceId, serverId: options.serverId, role: 'helper', madeBy: THIS_PROCESS }),
      ...(options.command ? { Entrypoint: [options.command[0]], Cmd: options.command.slice(1) } : { Entrypoint: ['/bin/false'], Cmd: [] }),
      ...(options.asRoot ? { User: '0:0' } : {}),
      HostConfig: { Mounts: options.mounts.map((mount) => ({ Type: 'volume', Source: mount.volume, Target: mount.at })), NetworkMode: 'none' },
    },
  });
  return { id: created.Id, remove: () => removeContainer(api, created.Id) };
}

/**
 * Starts a created helper and waits for its command to end, at most `timeoutMs` (then it is
 * killed and the step fails). Its state is asked with short calls, each with its own deadline,
 * rather than one wait call held open for as long as the command runs: an engine that stops
 * answering is noticed within a call's deadline, not at the end of the command's.
 */
export async function runHelper(
  api: DockerApi, id: string, timeoutMs: number, step = 'The helper command',
): Promise<{ exitCode: number; output: string }> {
  await api.json('POST', `/containers/${id}/start`, { accept: [304] });
  const deadline = Date.now() + timeoutMs;
  // At most 100 ms between looks: a command of a second (a small database's dump) is not left
  // waiting half a second after it ended, and a long one costs a short call every 100 ms.
  for (let pause = 20; ; pause = Math.min(pause * 2, 100)) {
    const inspected = await api.json<{ State: { Status: string; ExitCode: number } } | undefined>('GET', `/containers/${id}/json`, { accept: [404] });
    if (!inspected) throw new DriverError(`${step} could not finish: its helper container was removed while it ran.`);
    if (inspected.State.Status === 'exited' || inspected.State.Status === 'dead') {
      return { exitCode: inspected.State.ExitCode, output: await lastOutput(api, id) };
    }
    if (Date.now() > deadline) {
      await api.json('POST', `/containers/${id}/kill`, { accept: [404, 409] }).catch(() => undefined);
      throw new DriverError(`${step} did not finish within ${Math.round(timeoutMs / 1000)} s${await lastOutput(api, id)}, so it was stopped.`);
    }
    await sleep(pause);
  }
}

/**
 * Removes the service's helpers whose maker is a control-plane process of this host that no
 * longer exists (killed in the middle of a backup, copy or restore): they would hold its
 * volumes. A helper made on another host is left alone, since we cannot tell whether its maker
 * still works with it; deleting the service removes it.
 */
export async function removeAbandonedHelpers(api: DockerApi, serviceId: string): Promise<void> {
  const listed = await api.json<ListedContainer[]>('GET', '/containers/json', {
    query: { all: 1, filters: labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.role]: 'helper' }) },
  });
  for (const helper of listed) {
    const maker = helper.Labels[LABEL.madeBy];
    if (maker !== undefined && isLeaseOwnerGone(maker)) await removeContainer(api, helper.Id);
  }
}
