// What most Docker suites start from: a test server with its engine, a team with a full-access
// token, the bundled ERP image built on the test engine, and a Docker server of the team on it;
// and images derived from the bundled one (another command, user or labels) for the suites that
// need an image that behaves otherwise.
import { Readable } from 'node:stream';
import { admin } from '../../../support/cli.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../../../support/fixtures.js';
import type { AppConfig } from '../../../../src/app.js';
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { TEST_DOCKER_HOST } from './docker-engine.js';

export interface DockerTeam {
  server: TestServer;
  /** The seeded team (its local servers and services beside the Docker ones). */
  team: SeededTeam;
  teamId: string;
  token: string;
  /** The bundled ERP image. */
  image: string;
  /** Adds a Docker server of the team on the test engine, running `image` (the bundled one by default). */
  addServer(name: string, image?: string): Promise<string>;
}

export async function startDockerTeam(config: Partial<AppConfig> = {}): Promise<DockerTeam> {
  const server = await startTestServer({
    ...config, engine: { pollMs: 100, reconcileIntervalMs: 0, startTimeoutMs: 20_000, ...config.engine },
  }, {}, { engine: true });
  const team = await seedTeam(server.app);
  const { teamId } = team;
  const token = (await makeToken(server.app, teamId)).value;
  const image = (await admin(server.dataDir, ['build-erp-image', '--docker-host', TEST_DOCKER_HOST])).image as string;
  const addServer = async (name: string, serverImage = image) =>
    (await admin(server.dataDir, ['create-server', '--team', teamId, '--name', name, '--docker-host', TEST_DOCKER_HOST, '--image', serverImage])).id as string;
  return { server, team, teamId, token, image, addServer };
}

/**
 * `base` committed as `repo:tag` with Dockerfile-style `changes` (CMD, USER, LABEL), after the
 * `files` tar (if any) was put at its root. The caller removes it.
 */
export async function derivedImage(
  api: DockerApi, base: string, image: string, changes: string[], files?: Readable,
): Promise<string> {
  const container = await api.json<{ Id: string }>('POST', '/containers/create', { body: { Image: base, Labels: { 'io.teaminfra.role': 'helper' } } });
  try {
    if (files) await api.upload('PUT', `/containers/${container.Id}/archive`, files, 'application/x-tar', { query: { path: '/' } });
    const [repo, tag] = image.split(':');
    await api.json('POST', '/commit', { query: { container: container.Id, repo, tag, changes } });
  } finally {
    await api.json('DELETE', `/containers/${container.Id}`, { query: { force: 1 }, accept: [404] });
  }
  return image;
}

/**
 * The same team made with the operator's commands on a data directory, for suites that run the
 * real `teaminfra serve` on it (crashes, shutdowns): a team, a Docker server on `dockerHost`
 * running the bundled image, and a full-access token.
 */
export async function adminDockerTeam(dataDir: string, name: string, dockerHost = TEST_DOCKER_HOST): Promise<{ teamId: string; serverId: string; token: string }> {
  const teamId = (await admin(dataDir, ['create-team', '--name', name])).id as string;
  const image = (await admin(dataDir, ['build-erp-image', '--docker-host', dockerHost])).image as string;
  const serverId = (await admin(dataDir, ['create-server', '--team', teamId, '--name', 'docker', '--docker-host', dockerHost, '--image', image])).id as string;
  const token = (await admin(dataDir, ['create-token', '--team', teamId, '--name', 'ops', '--full-access'])).token as string;
  return { teamId, serverId, token };
}
