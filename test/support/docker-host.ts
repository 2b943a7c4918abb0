// Where the Docker suites find an engine (TEAMINFRA_TEST_DOCKER_HOST, or this machine's socket),
// and whether they run. Read by vitest.config.ts, which says once when they are skipped, and by
// test/engine/docker/support/docker-engine.ts; kept apart so the config loads no engine client.
import { existsSync } from 'node:fs';

export function testDockerHost(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEAMINFRA_TEST_DOCKER_HOST || 'unix:///var/run/docker.sock';
}

/** True where the Docker suites run: an engine is named or its socket exists, or .ci/run requires one (a missing engine then fails them). */
export function dockerSuitesRun(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.TEAMINFRA_REQUIRE_DOCKER === '1' || env.TEAMINFRA_TEST_DOCKER_HOST) return true;
  return existsSync(testDockerHost(env).slice('unix://'.length));
}
