// Waiting for an app container's healthcheck, against a real engine: the engine runs its first
// probe only once the healthcheck's interval has passed, so a container whose test passes at
// once is found healthy long before (its test run by us), one whose test fails is not, and one
// that exits is reported with its last output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/db/ids.js';
import { waitEngineHealthy } from '../../../src/engine/docker/app-containers.js';
import { buildErpImage } from '../../../src/engine/docker/erp-image.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';

const MINUTE_NS = 60_000 * 1e6;

describe.runIf(dockerAvailable)('waitEngineHealthy', () => {
  const api = testDockerApi();
  const serverId = newId('srv');
  let image: string;

  /** A started container of the bundled image running `program`, with a healthcheck running `test` every minute. */
  async function started(program: string, test: string): Promise<string> {
    const { Id } = await api.json<{ Id: string }>('POST', '/containers/create', {
      body: {
        Image: image, Entrypoint: ['/usr/local/bin/node', '-e', program], Cmd: [],
        Labels: { 'io.teaminfra.server-id': serverId, 'io.teaminfra.role': 'service' },
        Healthcheck: { Test: ['CMD', '/usr/local/bin/node', '-e', test], Interval: MINUTE_NS, Timeout: 5_000 * 1e6, Retries: 3 },
        HostConfig: { NetworkMode: 'none' },
      },
    });
    await api.json('POST', `/containers/${Id}/start`);
    return Id;
  }

  beforeAll(async () => {
    ({ image } = await buildErpImage(api));
  }, 300_000);
  afterAll(async () => {
    await removeEverythingOf(api, serverId);
    await api.close();
  });

  it('returns within seconds when the test passes, though the engine\'s first probe is a minute away', async () => {
    const id = await started('setInterval(() => {}, 1000)', 'process.exit(0)');
    const began = Date.now();
    await waitEngineHealthy(api, id, 'database', 30_000);
    expect(Date.now() - began).toBeLessThan(10_000);
  }, 60_000);

  it('fails at its deadline, saying so, while the test fails', async () => {
    const id = await started("console.log('still starting'); setInterval(() => {}, 1000)", 'process.exit(1)');
    await expect(waitEngineHealthy(api, id, 'database', 3_000))
      .rejects.toThrow('The database container was not healthy within 3 s; its last output was "still starting".');
  }, 60_000);

  it('fails with the last output of a container that exits before it is healthy', async () => {
    const id = await started("console.log('no data directory'); setTimeout(() => process.exit(3), 500)", 'process.exit(1)');
    await expect(waitEngineHealthy(api, id, 'database', 20_000))
      .rejects.toThrow('The database container exited (code 3) before it was healthy; its last output was "no data directory".');
  }, 60_000);
});
