// What the Tryton suites do as a team: REST calls with the team's token, each answer body kept
// (each suite checks at its end that no secret of a service is in any answer it was given), and
// what the engine holds of a service (its containers, volumes and networks, by label).
import { expect } from 'vitest';
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { LABEL, labelFilter } from '../../../../src/engine/docker/labels.js';
import { send, waitForOperation, type JsonResponse } from '../../support/engine-http.js';

export interface TeamCalls {
  /** Every answer body read, as JSON text. */
  answers: string[];
  call(method: string, path: string, body?: object, as?: string): Promise<JsonResponse>;
  /** Sends an action (202 expected) and waits for its operation to end; the ended operation. */
  actAndWait(method: string, path: string, timeoutMs: number, body?: object): Promise<any>;
}

/** Calls to the test server at `baseUrl()` as `token()` (read at each call: both are set in a beforeAll). */
export function teamCalls(baseUrl: () => string, token: () => string): TeamCalls {
  const answers: string[] = [];
  const call = async (method: string, path: string, body?: object, as = token()) => {
    const answer = await send(baseUrl(), method, path, as, body);
    answers.push(JSON.stringify(answer.body ?? null));
    return answer;
  };
  const actAndWait = async (method: string, path: string, timeoutMs: number, body?: object) => {
    const accepted = await call(method, path, body);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const done = await waitForOperation(baseUrl(), token(), accepted.body.id, timeoutMs);
    answers.push(JSON.stringify(done));
    return done;
  };
  return { answers, call, actAndWait };
}

/** The service's containers (as `role:/name`), volumes and networks on the engine, each sorted. */
export async function engineObjectsOf(api: DockerApi, serviceId: string) {
  const filters = labelFilter({ [LABEL.serviceId]: serviceId });
  const containers = await api.json<{ Names: string[]; Labels: Record<string, string> }[]>('GET', '/containers/json', { query: { all: 1, filters } });
  const volumes = (await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
  const networks = await api.json<{ Name: string }[]>('GET', '/networks', { query: { filters } });
  return {
    containers: containers.map((each) => `${each.Labels[LABEL.role]}:${each.Names[0]}`).sort(),
    volumes: volumes.map((each) => each.Name).sort(), networks: networks.map((each) => each.Name).sort(),
  };
}
