// A service's health asked from where the proxy stands: a GET of its health path sent from
// inside the proxy's container to the web container on the proxy's network. A service the proxy
// serves is published on no port (the proxy is its only way in), so this is how teaminfra checks
// a new revision before the proxy sends it traffic, and what runs now, over any engine address.
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverError } from '../../driver.js';
import { containerPid, lastOutput } from '../containers.js';
import type { DockerApi } from '../docker-api.js';
import { exchangeInProxy, parseAnswer } from './caddy-admin.js';
import { proxyContainerName } from './proxy-container.js';

const PROBE_TIMEOUT_MS = 2_000;
/** Each probe is three engine calls and a process in the proxy's container: a start is asked at this pace, not the published port's 20 ms. */
const PROBE_PACE_MS = 100;

/** Whether `upstream` (`name:port` on the proxy's network) answers 2xx at `path`, for this service (the bundled image says whose it is). */
export async function answersThroughProxy(api: DockerApi, serverId: string, upstream: string, path: string, serviceId: string): Promise<boolean> {
  try {
    const host = upstream.slice(0, upstream.lastIndexOf(':'));
    const { exitCode, stdout } = await exchangeInProxy(api, proxyContainerName(serverId), `TCP:${upstream}`,
      `GET ${path} HTTP/1.0\r\nHost: ${host}\r\nUser-Agent: teaminfra-health\r\n\r\n`, PROBE_TIMEOUT_MS);
    if (exitCode !== 0 || stdout.length === 0) return false;
    const answer = parseAnswer(stdout);
    if (answer.status < 200 || answer.status >= 300) return false;
    const claimed = /"service_id"\s*:\s*"([^"]+)"/.exec(answer.body.slice(0, 2000))?.[1];
    return claimed === undefined || claimed === serviceId;
  } catch {
    return false;
  }
}

/**
 * Waits until the container answers its health path through the proxy's network; fails with
 * its last output if it exits or never answers (the sentences of waitHealthy). Answers its pid.
 */
export async function waitHealthyThroughProxy(
  api: DockerApi, id: string, target: { serverId: string; upstream: string; path: string; serviceId: string }, timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await containerPid(api, id);
    if (!state.running) throw new DriverError(`The container exited (code ${state.exitCode}) before answering its health check${await lastOutput(api, id)}.`);
    if (await answersThroughProxy(api, target.serverId, target.upstream, target.path, target.serviceId)) return state.pid;
    if (Date.now() > deadline) {
      throw new DriverError(`The container did not answer its health check (GET ${target.path} on port ${target.upstream.slice(target.upstream.lastIndexOf(':') + 1)}) within ` +
        `${timeoutMs} ms${await lastOutput(api, id)}.`);
    }
    await sleep(PROBE_PACE_MS);
  }
}
