// A Docker team with a server on each of two engines, for moves: `here` on the test engine and
// `there` on a second dockerd started for the suite, with the demo image copied to it (it pulls
// nothing). close() takes down what it made, here's objects and the second engine.
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { admin } from '../../../support/cli.js';
import { copyImages } from '../../../offsite/support/copied-images.js';
import { removeEverythingOf } from './docker-engine.js';
import { startDockerTeam, type DockerTeam } from './docker-team.js';
import { startSecondEngine, type SecondEngine, type SecondEngineOptions } from './second-engine.js';

export interface TwoEngineTeam extends DockerTeam {
  second: SecondEngine;
  here: string;
  there: string;
  close(): Promise<void>;
}

export async function startTwoEngineTeam(api: DockerApi, engine: SecondEngineOptions = {}): Promise<TwoEngineTeam> {
  const second = await startSecondEngine(engine);
  let docker: DockerTeam | undefined;
  let here: string | undefined;
  const close = async () => {
    await docker?.server.close();
    if (here) await removeEverythingOf(api, here).catch(() => undefined);
    await second.stop();
  };
  try {
    docker = await startDockerTeam();
    await copyImages(api, second.api, [docker.image]);
    here = await docker.addServer('here');
    const there = (await admin(docker.server.dataDir, [
      'create-server', '--team', docker.teamId, '--name', 'there', '--docker-host', second.host, '--image', docker.image,
    ])).id as string;
    return { ...docker, second, here, there, close };
  } catch (error) {
    await close();
    throw error;
  }
}
