// move_erp_service when the new server fails under it, between two real engines (the second a
// dockerd of its own whose data root is a disk of its own, a size-limited tmpfs, so that it can
// really fill): its engine stops in the middle of the write pause, or its disk has less room than
// the service's data. Either way the move fails with a sentence and the service runs on its old
// server with the data it had (its database of several megabytes, compared by digest).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestServer } from '../../support/fixtures.js';
import { dockerAvailable, testDockerApi } from './support/docker-engine.js';
import { secondEngineStartable, type SecondEngine } from './support/second-engine.js';
import { growServiceDatabase, productsDigest } from './support/service-volume.js';
import { engineObjectsOf, teamCalls } from './support/team-calls.js';
import { startTwoEngineTeam, type TwoEngineTeam } from './support/two-engine-team.js';

const DATA_BYTES = 24_000_000;
/** The reason of a move that failed: a sentence that says where the service is, then what failed. */
const NOT_MOVED = /^The service was not moved and stays on its old server, as it was\. [A-Z][^]{20,}\.$/;

describe.runIf(dockerAvailable && secondEngineStartable)('move_erp_service when the new server fails', () => {
  const api = testDockerApi();
  let second: SecondEngine;
  let server: TestServer;
  let token: string;
  let image: string;
  let here: string;
  let there: string;
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);

  let team: TwoEngineTeam | undefined;

  beforeAll(async () => {
    team = await startTwoEngineTeam(api, { diskBytes: 1_000_000_000 });
    ({ second, server, token, image, here, there } = team);
  }, 600_000);

  afterAll(async () => {
    await team?.close();
    await api.close();
  }, 180_000);

  /** A running demo service on `here` whose database holds about DATA_BYTES; its id, url and data's digest. */
  async function runningServiceWithData(name: string) {
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: here, name });
    const serviceId = created.service_id as string;
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/stop`, 120_000)).toMatchObject({ state: 'succeeded' });
    await growServiceDatabase({ api, image, serverId: here }, serviceId, DATA_BYTES);
    const digest = await productsDigest({ api, image, serverId: here }, serviceId);
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    return { serviceId, digest, url: (await call('GET', `/api/service-erp/${serviceId}`)).body.url as string };
  }

  /** The service runs on `here` only, at the url it had, with exactly the data it had. */
  async function expectRunningHereWithItsData(service: { serviceId: string; digest: object; url: string }) {
    const after = (await call('GET', `/api/service-erp/${service.serviceId}`)).body;
    expect(after).toMatchObject({ state: 'running', server_id: here, url: service.url });
    expect((await fetch(after.url, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    expect(await productsDigest({ api, image, serverId: here }, service.serviceId)).toEqual(service.digest);
  }

  it('leaves the service running on its old server with its data, with a sentence, when the new server\'s disk is too small for it', async () => {
    const service = await runningServiceWithData('Disk full');
    const held = second.leaveFreeOnDisk(DATA_BYTES / 4);
    try {
      const failed = await actAndWait('POST', `/api/service-erp/${service.serviceId}/move`, 300_000, { server_id: there });
      expect(failed, JSON.stringify(failed)).toMatchObject({ state: 'failed' });
      expect(failed.reason).toMatch(NOT_MOVED);
      expect(failed.reason).toMatch(/no space left/i);
      // Failed before its write pause: never stopped.
      const steps = (failed.steps as { step: string }[]).map((step) => step.step);
      expect(steps).not.toContain('Stopped the service');
      await expectRunningHereWithItsData(service);
      expect(await engineObjectsOf(second.api, service.serviceId)).toEqual({ containers: [], volumes: [], networks: [] });
    } finally {
      second.leaveFreeOnDisk(1_000_000_000 - held);
    }
  }, 600_000);

  it('leaves the service running on its old server with its data, with a sentence, when the new server\'s engine stops in the write pause', async () => {
    const service = await runningServiceWithData('Engine stops');
    const accepted = await call('POST', `/api/service-erp/${service.serviceId}/move`, { server_id: there });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const operationId = accepted.body.id as string;
    const stepsNow = async () => {
      const row = await server.app.db.kysely.selectFrom('operations').select(['state', 'steps']).where('id', '=', operationId).executeTakeFirstOrThrow();
      return { state: row.state, steps: (JSON.parse(row.steps ?? '[]') as { step: string }[]).map((step) => step.step) };
    };
    const deadline = Date.now() + 120_000;
    while (!(await stepsNow()).steps.includes('Stopped the service')) {
      expect((await stepsNow()).state).toMatch(/queued|running/);
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(5);
    }
    // The service is stopped on its old server, its final copy under way: the new server goes away.
    await second.stopDaemon();
    try {
      const failed = await waitEnded(operationId);
      expect(failed, JSON.stringify(failed)).toMatchObject({ state: 'failed' });
      expect(failed.reason).toMatch(NOT_MOVED);
      await expectRunningHereWithItsData(service);
    } finally {
      await second.startDaemon();
    }
  }, 600_000);

  async function waitEnded(operationId: string) {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const operation = (await call('GET', `/api/operations/${operationId}`)).body;
      if (operation.state === 'failed' || operation.state === 'succeeded') return operation;
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(100);
    }
  }
});
