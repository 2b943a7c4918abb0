// Each ERP container has a memory and a CPU limit: the server's own (admin set-server-limits),
// else the operator's default, so that one service cannot take its engine's whole machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerLimitsOf } from '../../../src/engine/docker/container-limits.js';
import { admin, runCli } from '../../support/cli.js';
import type { TestServer } from '../../support/fixtures.js';
import { act } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam } from './support/docker-team.js';

describe('containerLimitsOf', () => {
  it('is the server\'s setting when it has one, else the default of the environment, else 2 GiB and 2 cores', () => {
    expect(containerLimitsOf({ memoryMb: 512, cpuMillicores: 1500 }, {})).toEqual({ memoryBytes: 512 * 1024 * 1024, nanoCpus: 1_500_000_000 });
    expect(containerLimitsOf({ memoryMb: null, cpuMillicores: null }, { TEAMINFRA_CONTAINER_MEMORY_MB: '1024', TEAMINFRA_CONTAINER_CPUS: '0.5' }))
      .toEqual({ memoryBytes: 1024 * 1024 * 1024, nanoCpus: 500_000_000 });
    expect(containerLimitsOf(undefined, { TEAMINFRA_CONTAINER_MEMORY_MB: 'lots', TEAMINFRA_CONTAINER_CPUS: '0' }))
      .toEqual({ memoryBytes: 2048 * 1024 * 1024, nanoCpus: 2_000_000_000 });
  });
});

describe.runIf(dockerAvailable)('admin set-server-limits and the containers of a Docker server', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;

  const limitsOfService = async (serviceId: string) => {
    const [container] = await api.json<{ Id: string }[]>('GET', '/containers/json', {
      query: { filters: JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`, 'io.teaminfra.role=service'] }) },
    });
    const inspected = await api.json<{ HostConfig: { Memory: number; MemorySwap: number; NanoCpus: number } }>('GET', `/containers/${container?.Id}/json`);
    return inspected.HostConfig;
  };
  const startedService = async (name: string) => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name });
    expect((await act(server.baseUrl, token, 'POST', `/api/service-erp/${created.service_id}/start`)).state).toBe('succeeded');
    return created.service_id as string;
  };

  beforeAll(async () => {
    const team = await startDockerTeam();
    ({ server, token } = team);
    serverId = await team.addServer('limited');
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  });

  it('gives a container the default limits, without swap, when the server has none of its own', async () => {
    expect(await limitsOfService(await startedService('Default limits'))).toMatchObject({
      Memory: 2048 * 1024 * 1024, MemorySwap: 2048 * 1024 * 1024, NanoCpus: 2_000_000_000,
    });
  });

  it('gives the server\'s own limits to the containers started after they are set, and "default" returns to the default', async () => {
    expect(await admin(server.dataDir, ['set-server-limits', '--server', serverId, '--memory-mb', '256', '--cpus', '0.5']))
      .toEqual({ id: serverId, memory_mb: 256, cpus: 0.5, default: { memory_mb: false, cpus: false } });
    expect(await limitsOfService(await startedService('Small'))).toMatchObject({ Memory: 256 * 1024 * 1024, NanoCpus: 500_000_000 });
    expect(await admin(server.dataDir, ['set-server-limits', '--server', serverId, '--cpus', 'default']))
      .toEqual({ id: serverId, memory_mb: 256, cpus: 2, default: { memory_mb: false, cpus: true } });
  });

  it('gives a stopped service its server\'s new limits at its next start', async () => {
    const serviceId = await startedService('Started before the change');
    expect(await limitsOfService(serviceId)).toMatchObject({ NanoCpus: 2_000_000_000 });
    expect((await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).state).toBe('succeeded');
    await admin(server.dataDir, ['set-server-limits', '--server', serverId, '--memory-mb', '384', '--cpus', '1']);
    expect((await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).state).toBe('succeeded');
    expect(await limitsOfService(serviceId)).toMatchObject({ Memory: 384 * 1024 * 1024, MemorySwap: 384 * 1024 * 1024, NanoCpus: 1_000_000_000 });
  });

  it('refuses a limit out of range, or a server that is not a Docker server, with a sentence', async () => {
    const tooSmall = await runCli(['admin', 'set-server-limits', '--server', serverId, '--memory-mb', '16', '--data-dir', server.dataDir]);
    expect([tooSmall.code, tooSmall.stderr.trim()]).toEqual([2, 'teaminfra: set-server-limits: --memory-mb must be a whole number from 128 to 1048576, or "default"; got "16".']);
    const nothing = await runCli(['admin', 'set-server-limits', '--server', serverId, '--data-dir', server.dataDir]);
    expect(nothing.stderr).toContain('give --memory-mb, --cpus or both');
    const local = await runCli(['admin', 'set-server-limits', '--server', 'srv_nope', '--cpus', '1', '--data-dir', server.dataDir]);
    expect(local.stderr.trim()).toBe('teaminfra: set-server-limits: server srv_nope is not a Docker server.');
  });
});
