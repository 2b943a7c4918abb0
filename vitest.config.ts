import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { BROWSER_SUITES, chromiumInstalled, chromiumPath } from './test/support/chromium.js';
import { dockerSuitesRun, testDockerHost } from './test/support/docker-host.js';

// Two projects. "sqlite" runs every suite on the embedded default. "postgres" runs the database
// layer and the black-box REST and MCP suites again on a real PostgreSQL server (each test
// database a fresh schema: test/support/database.ts), plus the suites of several nodes sharing
// one database; it exists only when TEAMINFRA_TEST_DATABASE_URL names a database to use
// (.ci/run starts the machine's PostgreSQL and sets it). Suites that are not about the engine
// (units, the panel in a browser) run once, on SQLite.
const postgresUrl = process.env.TEAMINFRA_TEST_DATABASE_URL;

// The database layer and every black-box suite in test/e2e run on both engines...
const ON_BOTH = ['test/db/**/*.test.ts', 'test/e2e/**/*.test.ts'];
// ...except these, which are about SQLite itself: its native addon, and `serve`
// processes over a data directory whose SQLite file the suite reads (restart, crashes, several
// processes on one file), and the MCP conformance run, which is about the protocol, not the
// engine. test/e2e/postgres-* and nodes-* are their PostgreSQL counterparts.
const SQLITE_ONLY = [
  'test/db/sqlite-addon.test.ts',
  'test/e2e/approvals-serve.test.ts',
  'test/e2e/decisions-loop.test.ts',
  'test/e2e/engine-crash.test.ts',
  'test/e2e/engine-shared-queue.test.ts',
  'test/e2e/mcp-conformance.test.ts',
  'test/e2e/restart.test.ts',
  'test/e2e/webhooks-serve.test.ts',
];
const POSTGRES_ONLY = ['test/e2e/postgres-*.test.ts', 'test/e2e/nodes-*.test.ts'];

const env = {
  // MCP action tools wait for their operation; suites without the engine want the answer at once.
  TEAMINFRA_MCP_WAIT_SECONDS: '0',
};

// The panel's suites need Chromium. Without it they are skipped, so that `npm test` passes on a
// fresh machine; CI sets TEAMINFRA_REQUIRE_BROWSER=1 (.ci/run), where a missing browser fails.
const skipBrowserSuites = !chromiumInstalled() && process.env.TEAMINFRA_REQUIRE_BROWSER !== '1';

// One line each, once: vitest may load this file more than once (and its workers inherit the mark).
if (skipBrowserSuites && !process.env.TEAMINFRA_BROWSER_SKIP_NOTED) {
  process.env.TEAMINFRA_BROWSER_SKIP_NOTED = '1';
  console.log(`Browser suites SKIPPED (${BROWSER_SUITES}): Chromium not found at ${chromiumPath()}. To run them, install it ` +
    '(apt-get install -y chromium) or set CHROMIUM_PATH; TEAMINFRA_REQUIRE_BROWSER=1 (set by .ci/run) makes a missing browser a failure.');
}
if (!postgresUrl && !process.env.TEAMINFRA_POSTGRES_SKIP_NOTED) {
  process.env.TEAMINFRA_POSTGRES_SKIP_NOTED = '1';
  console.log('PostgreSQL half SKIPPED: TEAMINFRA_TEST_DATABASE_URL is not set. To run it, set it to a PostgreSQL ' +
    'database the tests may create schemas in (TEAMINFRA_TEST_DATABASE_URL=postgres://user:password@127.0.0.1:5432/db npm test), ' +
    'or run "bash .ci/run", which starts the machine\'s PostgreSQL 15 and does that.');
}

// The Docker suites (test/engine/docker) need a Docker engine: this machine's socket or
// TEAMINFRA_TEST_DOCKER_HOST. Without one they are skipped, said once; .ci/run sets
// TEAMINFRA_REQUIRE_DOCKER=1, which makes a missing engine fail them.
if (!dockerSuitesRun() && !process.env.TEAMINFRA_DOCKER_SKIP_NOTED) {
  process.env.TEAMINFRA_DOCKER_SKIP_NOTED = '1';
  console.log(`Docker suites SKIPPED: no Docker engine at ${testDockerHost()}. To run them, start dockerd (as root: apt-get install docker.io; ` +
    'dockerd &) or set TEAMINFRA_TEST_DOCKER_HOST, or run "bash .ci/run", which does that.');
}

// The off-site suites (test/offsite) need a real S3-compatible store: Debian's Ceph RADOS Gateway
// with one monitor and one OSD (test/offsite/support/object-store-server.ts says why that one).
if (!existsSync('/usr/bin/radosgw') && process.env.TEAMINFRA_REQUIRE_OBJECT_STORE !== '1' && !process.env.TEAMINFRA_OBJECT_STORE_SKIP_NOTED) {
  process.env.TEAMINFRA_OBJECT_STORE_SKIP_NOTED = '1';
  console.log('Off-site backup suites SKIPPED (test/offsite): /usr/bin/radosgw not found. To run them, install it ' +
    '(apt-get install -y radosgw ceph-mon ceph-osd), or run "bash .ci/run", which does that.');
}
// The registry suites (images pulled by the engine) need Debian's docker-registry beside the engine:
// without it they are skipped, said once; .ci/run installs it, and TEAMINFRA_REQUIRE_DOCKER=1 fails them.
if (dockerSuitesRun() && !existsSync('/usr/bin/docker-registry') && process.env.TEAMINFRA_REQUIRE_DOCKER !== '1' &&
  !process.env.TEAMINFRA_REGISTRY_SKIP_NOTED) {
  process.env.TEAMINFRA_REGISTRY_SKIP_NOTED = '1';
  console.log('Registry suites SKIPPED (test/engine/docker/image-pull, service-images): /usr/bin/docker-registry not found. ' +
    'To run them, install it (apt-get install -y docker-registry), or run "bash .ci/run", which does that.');
}

// The proxy's certificate suites need Debian's Pebble (an ACME CA) and its DNS test server:
// without them they are skipped, said once; .ci/run installs them.
if (!existsSync('/usr/bin/pebble') && !process.env.TEAMINFRA_PEBBLE_SKIP_NOTED) {
  process.env.TEAMINFRA_PEBBLE_SKIP_NOTED = '1';
  console.log('Certificate suites SKIPPED (test/engine/docker/proxy, test/engine/domains/name-lookup): /usr/bin/pebble not found. ' +
    'To run them, install it (apt-get install -y pebble), or run "bash .ci/run", which does that.');
}

const browserExcluded = skipBrowserSuites ? [BROWSER_SUITES] : [];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // `teaminfra mcp`'s bundle, made when a bare tsc left it older than the compiled code.
    globalSetup: ['test/support/mcp-bundle-setup.ts'],
    // Black-box suites start servers and child processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      {
        extends: true as const,
        test: {
          name: 'sqlite', include: ['test/**/*.test.ts'], exclude: [...POSTGRES_ONLY, ...browserExcluded],
          env: { ...env, TEAMINFRA_TEST_ENGINE: 'sqlite' },
        },
      },
      ...(postgresUrl
        ? [{
            extends: true as const,
            test: {
              name: 'postgres', include: ON_BOTH, exclude: [...SQLITE_ONLY, ...browserExcluded],
              env: { ...env, TEAMINFRA_TEST_ENGINE: 'postgres', TEAMINFRA_TEST_DATABASE_URL: postgresUrl },
            },
          }]
        : []),
    ],
  },
});
