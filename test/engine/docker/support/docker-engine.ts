// The Docker engine the Docker suites run against: TEAMINFRA_TEST_DOCKER_HOST, or this
// machine's socket. Without one they are skipped (vitest.config.ts prints one line saying so),
// unless TEAMINFRA_REQUIRE_DOCKER=1 (.ci/run), where a missing engine fails them.
import { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../../../../src/engine/docker/engine-address.js';
import { LABEL, labelFilter } from '../../../../src/engine/docker/labels.js';
import { dockerSuitesRun, testDockerHost } from '../../../support/docker-host.js';

export const TEST_DOCKER_HOST = testDockerHost();

export const dockerAvailable = dockerSuitesRun();

export function testDockerApi(host = TEST_DOCKER_HOST): DockerApi {
  return new DockerApi(parseEngineAddress(host));
}

export async function containersOfServer(api: DockerApi, serverId: string, role?: string) {
  return api.json<{ Id: string; State: string; Labels: Record<string, string>; Names: string[] }[]>('GET', '/containers/json', {
    query: { all: 1, filters: labelFilter({ [LABEL.serverId]: serverId, ...(role ? { [LABEL.role]: role } : {}) }) },
  });
}

export async function volumesOfServer(api: DockerApi, serverId: string): Promise<{ Name: string; Labels: Record<string, string> }[]> {
  const listed = await api.json<{ Volumes: { Name: string; Labels: Record<string, string> }[] | null }>('GET', '/volumes', {
    query: { filters: labelFilter({ [LABEL.serverId]: serverId }) },
  });
  return listed.Volumes ?? [];
}

/** Removes everything a test server left on the engine (only what carries its server's label). */
export async function removeEverythingOf(api: DockerApi, serverId: string): Promise<void> {
  for (const container of await containersOfServer(api, serverId)) await api.json('DELETE', `/containers/${container.Id}`, { query: { force: 1 }, accept: [404] });
  for (const volume of await volumesOfServer(api, serverId)) await api.json('DELETE', `/volumes/${volume.Name}`, { accept: [404] });
  for (const network of await networksOfServer(api, serverId)) await api.json('DELETE', `/networks/${network.Id}`, { accept: [404] });
}

export async function networksOfServer(api: DockerApi, serverId: string): Promise<{ Id: string; Name: string; Labels: Record<string, string> }[]> {
  return api.json('GET', '/networks', { query: { filters: labelFilter({ [LABEL.serverId]: serverId }) } });
}
