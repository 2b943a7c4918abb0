// Move benchmark: one service of the bundled app tryton (Tryton 6.0 and its own PostgreSQL 15)
// holding BENCH_TRYTON_PARTIES parties (default 20,000, made through JSON-RPC) moved from a Docker
// server on this machine's engine to one on a second engine (a dockerd of its own, standing in
// for another machine: test/engine/docker/support/second-engine.ts; the images copied to it
// offline). Through the API: the whole move (request to the operation's end) and its write pause
// (`result.write_pause_ms`). Against the same pause done by hand in the same run, back the other
// way, with the engines' and PostgreSQL's own tools: `docker stop` of the Tryton container on the
// second engine, `pg_dump -Fc` in its PostgreSQL container piped into `pg_restore --clean
// --single-transaction` in the PostgreSQL container the first engine kept (started beforehand,
// as an operator preparing the move would), `docker start` of the Tryton container there, /health
// polled through its front. Goal: the write pause at most 1.5 times that.
// Needs root (a second dockerd), the Tryton images and the bundled image on the engine; without
// them it says so in one line and measures nothing. Takes minutes: run it with
// BENCH_MODULE_TIMEOUT_SECONDS=1800.
import { setTimeout as sleep } from 'node:timers/promises';
import { createDockerServer } from '../src/cli/docker-commands.js';
import { bundledApp } from '../src/engine/apps/bundled-apps.js';
import { listAppContainers } from '../src/engine/docker/app-containers.js';
import { DockerApi } from '../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../src/engine/docker/engine-address.js';
import { buildErpImage } from '../src/engine/docker/erp-image.js';
import { frontContainerName } from '../src/engine/docker/labels.js';
import { copyImages } from '../test/offsite/support/copied-images.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from '../test/engine/docker/support/second-engine.js';
import { startEngineBenchServer } from './support/engine-server.js';
import { envNumber } from './support/settings.js';
import { answers, docker, fillParties, removeEverythingOf, shell } from './support/tryton-by-hand.js';

export interface MoveBenchFigures {
  skipped?: string;
  parties?: number;
  /** The whole move through the API, request to the operation's end. */
  moveMs?: number;
  /** Its result.write_pause_ms. */
  writePauseMs?: number;
  /** docker stop, pg_dump | pg_restore between the engines' PostgreSQL containers, docker start, /health. */
  byHandMs?: number;
  pauseOverByHand?: number;
  /** Where the move's time went: its operation's steps, "step: ms". */
  steps?: string[];
}

export default async function moveBench(): Promise<MoveBenchFigures> {
  const host = process.env.TEAMINFRA_BENCH_DOCKER_HOST || 'unix:///var/run/docker.sock';
  const api = new DockerApi(parseEngineAddress(host));
  const tryton = bundledApp('tryton')!;
  const images = [...new Set(tryton.containers.map((container) => container.image))];
  const skip = async (why: string): Promise<MoveBenchFigures> => {
    await api.close();
    console.log(`move: SKIPPED, ${why}`);
    return { skipped: why };
  };
  if (!secondEngineStartable) return skip('a second Docker engine cannot be started here (it needs root, dockerd and ip)');
  if (!(await api.ping(2_000).then(() => true, () => false))) return skip(`no Docker engine answers at ${host}`);
  for (const image of images) {
    if (!(await api.json<object | undefined>('GET', `/images/${encodeURIComponent(image)}/json`, { accept: [404] }))) {
      return skip(`the image ${image} is not on the engine (teaminfra admin build-app-images --app tryton)`);
    }
  }
  const bench = await startEngineBenchServer('move');
  const { app, teamId } = bench;
  let second: SecondEngine | undefined;
  let here = '';
  try {
    const { call, timed } = bench;
    second = await startSecondEngine();
    const there = second;
    await copyImages(api, there.api, images);
    const parties = Math.round(envNumber('BENCH_TRYTON_PARTIES', 20_000));
    const { image } = await buildErpImage(api);
    here = await createDockerServer(app.db.kysely, { teamId, name: 'move-from', dockerHost: host, image });
    const thereId = await createDockerServer(app.db.kysely, { teamId, name: 'move-to', dockerHost: there.host, image: null });
    const created = await timed('POST', '/api/service-erp', { server_id: here, name: 'Tryton', app: 'tryton' }, 20);
    const serviceId = created.operation.service_id as string;
    const password = created.operation.result.initial_credentials.password as string;
    await timed('POST', `/api/service-erp/${serviceId}/start`, undefined, 20);
    const urlHere = ((await call('GET', `/api/service-erp/${serviceId}`)).body.url as string).replace(/\/$/, '');
    await fillParties(urlHere, password, parties);

    // Through the API.
    const moved = await timed('POST', `/api/service-erp/${serviceId}/move`, { server_id: thereId }, 20);
    const moveMs = moved.ms;
    const writePauseMs = moved.operation.result.write_pause_ms as number;
    const { body: withSteps } = await call('GET', `/api/operations/${moved.operation.id}`);
    const steps = (withSteps.steps as { step: string; duration_ms: number }[]).map((step) => `${step.step}: ${step.duration_ms}`);

    // By hand, back the other way: the first engine kept the stopped service (the rollback window).
    const onHere = await listAppContainers(api, serviceId);
    const onThere = await listAppContainers(there.api, serviceId);
    const database = (listed: typeof onHere) => listed.find((each) => each.appService === 'database')!.id;
    const web = (listed: typeof onHere) => listed.find((each) => each.appService === 'tryton')!.id;
    // Prepared before the pause, as an operator would: the target's PostgreSQL running, its front up.
    docker('start', database(onHere));
    while (docker('inspect', '--format', '{{.State.Health.Status}}', database(onHere)).trim() !== 'healthy') await sleep(50);
    docker('start', frontContainerName(serviceId));
    const otherHost = ['-H', there.host];
    const started = performance.now();
    docker(...otherHost, 'stop', web(onThere));
    await shell(`docker -H ${there.host} exec -u postgres ${database(onThere)} pg_dump --format=custom --dbname=tryton`
      + ` | docker exec -i -u postgres ${database(onHere)} pg_restore --clean --if-exists --no-owner --single-transaction --dbname=tryton`);
    docker('start', web(onHere));
    const deadline = Date.now() + 600_000;
    while (!(await answers(`${urlHere}/health`))) {
      if (Date.now() > deadline) throw new Error('Tryton did not answer /health within 10 minutes after the move by hand');
      await sleep(20);
    }
    const byHandMs = performance.now() - started;

    const figures: MoveBenchFigures = {
      parties, moveMs: Math.round(moveMs), writePauseMs, byHandMs: Math.round(byHandMs),
      pauseOverByHand: Math.round((writePauseMs / byHandMs) * 100) / 100, steps,
    };
    console.log([
      `move: one Tryton service (PostgreSQL in its own container) with ${parties} parties, from this machine's engine to a second engine`,
      `  whole move ${String(figures.moveMs).padStart(9)} ms`,
      `  write pause ${String(writePauseMs).padStart(8)} ms   by hand (stop, pg_dump | pg_restore, start, /health) ${String(figures.byHandMs).padStart(8)} ms   = ${figures.pauseOverByHand}x`,
      ...steps.map((step) => `    ${step} ms`),
    ].join('\n'));
    return figures;
  } finally {
    await bench.close();
    if (here) await removeEverythingOf(api, here);
    await second?.stop();
    await api.close();
  }
}

// Run directly: node dist/bench/move.bench.js
if (import.meta.url === `file://${process.argv[1]}`) await moveBench();
