// Tryton benchmark: one service of the bundled app tryton (Tryton 6.0 and its own PostgreSQL 15)
// holding BENCH_TRYTON_PARTIES parties (default 20,000, made through JSON-RPC), on a Docker
// server. Each step through the API (request to the operation's end) against the same step done
// by hand in the same run with the engine's and PostgreSQL's own tools:
//   start   API start of the stopped service  vs  `docker start` of its front and its database
//           container, its healthcheck waited for, `docker start` of its Tryton container,
//           /health polled through the front;
//   backup  API backup                       vs  `docker exec DB pg_dump -Fc | zstd -1` to a file
//           (the file store not included: a floor);
//   restore API restore of that backup       vs  `docker stop` Tryton, `zstd -dc | docker exec -i DB
//           pg_restore --clean --single-transaction`, `docker start` Tryton, /health polled;
//   copy    API copy (a stopped new service) vs  `createdb` + `pg_dump -Fc | pg_restore` into a
//           second database of the same server (a floor: no new containers, volumes or network).
// Without an engine or the images it says so in one line and measures nothing.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDockerServer } from '../src/cli/docker-commands.js';
import { bundledApp } from '../src/engine/apps/bundled-apps.js';
import { listAppContainers } from '../src/engine/docker/app-containers.js';
import { DockerApi } from '../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../src/engine/docker/engine-address.js';
import { buildErpImage } from '../src/engine/docker/erp-image.js';
import { frontContainerName } from '../src/engine/docker/labels.js';
import { startEngineBenchServer } from './support/engine-server.js';
import { answers, docker, fillParties, removeEverythingOf, shell, trytonUnavailable } from './support/tryton-by-hand.js';
import { envNumber } from './support/settings.js';

const STEPS = ['start', 'backup', 'restore', 'copy'] as const;
type Step = (typeof STEPS)[number];

export interface TrytonBenchFigures {
  skipped?: string;
  parties?: number;
  ours?: Record<Step, number>;
  byHand?: Record<Step, number>;
  ratios?: Record<`${Step}OverByHand`, number>;
}

export default async function trytonBench(): Promise<TrytonBenchFigures> {
  const host = process.env.TEAMINFRA_BENCH_DOCKER_HOST || 'unix:///var/run/docker.sock';
  const api = new DockerApi(parseEngineAddress(host));
  const tryton = bundledApp('tryton')!;
  const unavailable = await trytonUnavailable(api, host, tryton);
  if (unavailable) {
    await api.close();
    console.log(`tryton: SKIPPED, ${unavailable}`);
    return { skipped: unavailable };
  }
  const bench = await startEngineBenchServer('tryton');
  const { app, baseUrl, dataDir, teamId, token } = bench;
  let serverId = '';
  try {
    const { call } = bench;
    const timed = (method: string, path: string, body?: object) => bench.timed(method, path, body, 20);

    const parties = Math.round(envNumber('BENCH_TRYTON_PARTIES', 20_000));
    const { image } = await buildErpImage(api);
    serverId = await createDockerServer(app.db.kysely, { teamId, name: 'docker-tryton', dockerHost: host, image });
    const created = await timed('POST', '/api/service-erp', { server_id: serverId, name: 'Tryton', app: 'tryton' });
    const serviceId = created.operation.service_id as string;
    const password = created.operation.result.initial_credentials.password as string;
    await timed('POST', `/api/service-erp/${serviceId}/start`);
    const url = ((await call('GET', `/api/service-erp/${serviceId}`)).body.url as string).replace(/\/$/, '');
    await fillParties(url, password, parties);

    const containers = async () => {
      const listed = await listAppContainers(api, serviceId);
      return { database: listed.find((each) => each.appService === 'database')!, web: listed.find((each) => each.appService === 'tryton')! };
    };
    const healthy = async () => {
      const deadline = Date.now() + 600_000;
      while (!(await answers(`${url}/health`))) {
        if (Date.now() > deadline) throw new Error('Tryton did not answer /health within 10 minutes');
        await sleep(20);
      }
    };
    const ours = {} as Record<Step, number>;
    const byHand = {} as Record<Step, number>;

    // start
    await timed('POST', `/api/service-erp/${serviceId}/stop`);
    ours.start = (await timed('POST', `/api/service-erp/${serviceId}/start`)).ms;
    await timed('POST', `/api/service-erp/${serviceId}/stop`);
    {
      const { database, web } = await containers();
      const started = performance.now();
      // The service's url is its front's port: the front is started too, as the API's start does.
      docker('start', frontContainerName(serviceId));
      docker('start', database.id);
      while (docker('inspect', '--format', '{{.State.Health.Status}}', database.id).trim() !== 'healthy') await sleep(50);
      docker('start', web.id);
      await healthy();
      byHand.start = performance.now() - started;
    }
    // The service is running again (started by hand, as the API sees it).
    await timed('POST', `/api/service-erp/${serviceId}/start`);

    // backup
    const backup = await timed('POST', `/api/service-erp/${serviceId}/backups`);
    ours.backup = backup.ms;
    const dumpFile = join(dataDir, 'by-hand.dump.zst');
    {
      const { database } = await containers();
      const started = performance.now();
      await shell(`docker exec -u postgres ${database.id} pg_dump --format=custom --dbname=tryton | zstd -1 -q -T0 -o ${dumpFile}`);
      byHand.backup = performance.now() - started;
    }

    // restore
    ours.restore = (await timed('POST', `/api/backups/${backup.operation.backup_id}/restore`, {})).ms;
    {
      const { database, web } = await containers();
      const started = performance.now();
      docker('stop', web.id);
      await shell(`zstd -dc ${dumpFile} | docker exec -i -u postgres ${database.id} pg_restore --clean --if-exists --no-owner --single-transaction --dbname=tryton`);
      docker('start', web.id);
      await healthy();
      byHand.restore = performance.now() - started;
    }

    // copy
    const copy = await timed('POST', `/api/service-erp/${serviceId}/copies`, { name: 'Copy' });
    ours.copy = copy.ms;
    {
      const { database } = await containers();
      const started = performance.now();
      docker('exec', '-u', 'postgres', database.id, 'createdb', 'tryton_copy');
      await shell(`docker exec -u postgres ${database.id} pg_dump --format=custom --dbname=tryton | docker exec -i -u postgres ${database.id} pg_restore --no-owner --dbname=tryton_copy`);
      byHand.copy = performance.now() - started;
    }
    await timed('DELETE', `/api/service-erp/${copy.operation.service_id}`);
    rmSync(dumpFile, { force: true });

    const ratio = (step: Step) => Math.round((ours[step] / byHand[step]) * 10) / 10;
    const figures: TrytonBenchFigures = {
      parties, ours: round(ours), byHand: round(byHand),
      ratios: { startOverByHand: ratio('start'), backupOverByHand: ratio('backup'), restoreOverByHand: ratio('restore'), copyOverByHand: ratio('copy') },
    };
    console.log([
      `tryton: one Tryton service (PostgreSQL in its own container) with ${parties} parties, on a Docker server`,
      ...STEPS.map((step) => `  ${step.padEnd(8)} API ${String(figures.ours![step]).padStart(9)} ms   by hand ${String(figures.byHand![step]).padStart(9)} ms   = ${ratio(step)}x`),
    ].join('\n'));
    return figures;
  } finally {
    await bench.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }
}

function round(values: Record<Step, number>): Record<Step, number> {
  return Object.fromEntries(Object.entries(values).map(([step, ms]) => [step, Math.round(ms)])) as Record<Step, number>;
}

// Run directly: node dist/bench/tryton.bench.js
if (import.meta.url === `file://${process.argv[1]}`) await trytonBench();
