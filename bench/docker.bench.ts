// Docker benchmark: one ERP service with a 100 MB database on a Docker server and one with the
// same database on the local driver, in the same run: start (API request to the operation's
// end: the service answers its health check), redeploy, backup and stop, over a few rounds
// (median, max); and the Docker backup against a `docker cp` of the same data (the engine's
// archive GET of the data directory of the running container, written to a file, which is what
// `docker cp` does), and against that copy piped through the backup's compression and checksum;
// and a copy through the API against `docker cp` of the same data into a fresh volume. Targets: container start within 3x the local process, backup within 2x
// docker cp. Without an engine (TEAMINFRA_BENCH_DOCKER_HOST, else this machine's socket) it
// says so in one line and measures nothing. Size with BENCH_BACKUP_MB, rounds with BENCH_ROUNDS.
import { copyFileSync, createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { insertServer } from '../src/db/repositories/servers.js';
import { insertService } from '../src/db/repositories/services.js';
import { createDockerServer } from '../src/cli/docker-commands.js';
import { singleFileTar } from '../src/engine/docker/archives.js';
import { createHelper, listServiceContainers } from '../src/engine/docker/containers.js';
import { compressToFile } from '../src/engine/backup-compression.js';
import { DockerApi } from '../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../src/engine/docker/engine-address.js';
import { buildErpImage } from '../src/engine/docker/erp-image.js';
import { dataVolumeName, LABEL, labelFilter } from '../src/engine/docker/labels.js';
import { fillDatabase } from './support/erp-database.js';
import { startEngineBenchServer } from './support/engine-server.js';
import { envNumber } from './support/settings.js';

const STEPS = ['start', 'redeploy', 'backup', 'stop'] as const;
type Step = (typeof STEPS)[number];
interface Spread { medianMs: number; maxMs: number }

export interface DockerBenchFigures {
  skipped?: string;
  databaseMb?: number;
  rounds?: number;
  docker?: Record<Step, Spread>;
  local?: Record<Step, Spread>;
  dockerCp?: Spread;
  /** docker cp piped through the backup's compression: what a compressed, checksummed copy costs at the least. */
  dockerCpCompressed?: Spread;
  /** The engine's floor for a start: the same stopped container started by hand (one API call) until its health path answers. */
  dockerStartByHand?: Spread;
  /** A copy through the API, request to the operation's end. */
  copy?: Spread;
  /** `docker cp SRC:/data - | docker cp - DST:/` of the same data into a fresh volume. */
  dockerCpCopy?: Spread;
  ratios?: { startDockerOverLocal: number; stopDockerOverLocal: number; redeployDockerOverLocal: number; backupDockerOverLocal: number; backupOverDockerCp: number; backupOverDockerCpCompressed: number; startOverDockerStartByHand: number; copyOverDockerCp: number };
  target?: { startWithinLocalTimes: number; backupWithinDockerCpTimes: number; met: boolean };
}

const START_TARGET = 3;
const BACKUP_TARGET = 2;

export default async function dockerBench(): Promise<DockerBenchFigures> {
  const host = process.env.TEAMINFRA_BENCH_DOCKER_HOST || 'unix:///var/run/docker.sock';
  const api = new DockerApi(parseEngineAddress(host));
  try {
    await api.ping(2_000);
  } catch {
    await api.close();
    console.log(`docker: SKIPPED, no Docker engine answers at ${host} (start dockerd, or set TEAMINFRA_BENCH_DOCKER_HOST)`);
    return { skipped: `no Docker engine at ${host}` };
  }
  const bench = await startEngineBenchServer('docker');
  const { app, baseUrl, dataDir, teamId, token } = bench;
  const db = app.db.kysely;
  let dockerServer = '';
  try {
    const { call } = bench;
    const timed = (method: string, path: string, body?: object) => bench.timed(method, path, body, 5);

    const megabytes = envNumber('BENCH_BACKUP_MB', 100);
    const rounds = Math.round(envNumber('BENCH_ROUNDS', 3));
    const source = join(dataDir, 'bench-source.sqlite');
    fillDatabase(source, megabytes);

    const { image } = await buildErpImage(api);
    dockerServer = await createDockerServer(db, { teamId, name: 'docker', dockerHost: host, image });
    const created = await timed('POST', '/api/service-erp', { server_id: dockerServer, name: 'Large ERP on Docker' });
    const dockerService = created.operation.service_id as string;
    await putIntoVolume(api, image, dockerServer, dockerService, source);

    const localServer = await insertServer(db, { teamId, name: 'local', capacity: 2 });
    const localService = await insertService(db, { teamId, serverId: localServer, name: 'Large ERP, local' });
    const localFile = join(dataDir, 'servers', localServer, localService, 'erp.sqlite');
    mkdirSync(dirname(localFile), { recursive: true });
    copyFileSync(source, localFile);

    const measured: Record<'docker' | 'local', Record<Step, number[]>> = {
      docker: { start: [], redeploy: [], backup: [], stop: [] }, local: { start: [], redeploy: [], backup: [], stop: [] },
    };
    // Interleaved, so that both drivers see the same machine (two cores shared with others).
    for (let round = 0; round < rounds; round++) {
      for (const [driver, serviceId] of [['docker', dockerService], ['local', localService]] as const) {
        measured[driver].start.push((await timed('POST', `/api/service-erp/${serviceId}/start`)).ms);
        measured[driver].redeploy.push((await timed('POST', `/api/service-erp/${serviceId}/redeploy`)).ms);
        measured[driver].backup.push((await timed('POST', `/api/service-erp/${serviceId}/backups`)).ms);
        measured[driver].stop.push((await timed('POST', `/api/service-erp/${serviceId}/stop`)).ms);
      }
    }

    // docker cp of the running container's data directory, to a file.
    await timed('POST', `/api/service-erp/${dockerService}/start`);
    const [container] = (await listServiceContainers(api, dockerService)).filter((each) => each.running);
    if (!container) throw new Error('the Docker service does not run');
    const copies: number[] = [];
    const compressedCopies: number[] = [];
    const archive = () => api.stream('GET', `/containers/${container.id}/archive`, { query: { path: '/data' }, timeoutMs: 600_000 });
    for (let round = 0; round < rounds; round++) {
      const target = join(dataDir, `docker-cp-${round}.tar`);
      let started = performance.now();
      await pipeline(await archive(), createWriteStream(target));
      copies.push(performance.now() - started);
      rmSync(target);
      // The floor of any compressed backup: the same bytes through the backup's zstd (level 1, its threads) and SHA-256.
      started = performance.now();
      await compressToFile(await archive(), `${target}.zst`);
      compressedCopies.push(performance.now() - started);
      rmSync(`${target}.zst`);
    }
    await timed('POST', `/api/service-erp/${dockerService}/stop`);

    // The floor of a container start: what a careful engineer's script does with the same stopped
    // container, one start call, one look at the port the engine published (the service's own
    // port belongs to its front, so the container's is chosen by the engine at each start), then
    // its health path asked every 5 ms until it answers.
    const byHand: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      await api.json('POST', `/containers/${container.id}/start`);
      const published = Number((await api.json<{ NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } }>(
        'GET', `/containers/${container.id}/json`)).NetworkSettings.Ports['8080/tcp']?.[0]?.HostPort);
      const deadline = Date.now() + 60_000;
      while (!(await answersHealth(published))) {
        if (Date.now() > deadline) throw new Error(`the container started by hand did not answer on port ${published} within 60 s`);
        await sleep(5);
      }
      byHand.push(performance.now() - started);
      await api.json('POST', `/containers/${container.id}/stop`, { query: { t: 10 } });
    }

    // A copy of the service through the API (snapshot in a helper, streamed into the copy's new
    // volume), against `docker cp SRC:/data - | docker cp - DST:/` of the same stopped data into a
    // fresh volume: the engine's two archive calls piped into each other, nothing else.
    const ourCopies: number[] = [];
    const copiesByHand: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const copy = await timed('POST', `/api/service-erp/${dockerService}/copies`, { name: `copy ${round}` });
      ourCopies.push(copy.ms);
      await timed('DELETE', `/api/service-erp/${copy.operation.service_id}`);
      const volume = `teaminfra-bench-copy-${dockerServer.toLowerCase()}-${round}`;
      await api.json('POST', '/volumes/create', { body: { Name: volume, Labels: { [LABEL.serverId]: dockerServer, [LABEL.role]: 'data' } } });
      const receiver = await createHelper(api, { image, serviceId: dockerService, serverId: dockerServer, mounts: [{ volume, at: '/data' }] });
      try {
        const started = performance.now();
        await api.upload('PUT', `/containers/${receiver.id}/archive`, await archive(), 'application/x-tar', { query: { path: '/' } });
        copiesByHand.push(performance.now() - started);
      } finally {
        await receiver.remove();
        await api.json('DELETE', `/volumes/${volume}`, { accept: [404] });
      }
    }

    const spreadOf = (values: number[]): Spread => ({ medianMs: round1(median(values)), maxMs: round1(Math.max(...values)) });
    const spreads = (driver: 'docker' | 'local') =>
      Object.fromEntries(STEPS.map((step) => [step, spreadOf(measured[driver][step])])) as Record<Step, Spread>;
    const docker = spreads('docker');
    const local = spreads('local');
    const dockerCp = spreadOf(copies);
    const dockerCpCompressed = spreadOf(compressedCopies);
    const dockerStartByHand = spreadOf(byHand);
    const copy = spreadOf(ourCopies);
    const dockerCpCopy = spreadOf(copiesByHand);
    const ratio = (a: number, b: number) => round1(a / b);
    const figures: DockerBenchFigures = {
      databaseMb: round1(statSync(source).size / 1e6), rounds, docker, local, dockerCp, dockerCpCompressed, dockerStartByHand, copy, dockerCpCopy,
      ratios: {
        startDockerOverLocal: ratio(docker.start.medianMs, local.start.medianMs),
        stopDockerOverLocal: ratio(docker.stop.medianMs, local.stop.medianMs),
        redeployDockerOverLocal: ratio(docker.redeploy.medianMs, local.redeploy.medianMs),
        backupDockerOverLocal: ratio(docker.backup.medianMs, local.backup.medianMs),
        backupOverDockerCp: ratio(docker.backup.medianMs, dockerCp.medianMs),
        backupOverDockerCpCompressed: ratio(docker.backup.medianMs, dockerCpCompressed.medianMs),
        startOverDockerStartByHand: ratio(docker.start.medianMs, dockerStartByHand.medianMs),
        copyOverDockerCp: ratio(copy.medianMs, dockerCpCopy.medianMs),
      },
      target: {
        startWithinLocalTimes: START_TARGET, backupWithinDockerCpTimes: BACKUP_TARGET,
        met: docker.start.medianMs <= START_TARGET * local.start.medianMs && docker.backup.medianMs <= BACKUP_TARGET * dockerCp.medianMs,
      },
    };
    printReport(figures);
    return figures;
  } finally {
    await bench.close();
    if (dockerServer) await removeEverythingOf(api, dockerServer);
    await api.close();
  }
}

/** The generated database as the service's data, written into its (stopped) volume. */
async function putIntoVolume(api: DockerApi, image: string, serverId: string, serviceId: string, file: string): Promise<void> {
  const helper = await createHelper(api, { image, serviceId, serverId, mounts: [{ volume: dataVolumeName(serviceId), at: '/data' }] });
  try {
    await api.upload('PUT', `/containers/${helper.id}/archive`, singleFileTar('erp.sqlite', file, statSync(file).size), 'application/x-tar',
      { query: { path: '/data' }, timeoutMs: 600_000 });
  } finally {
    await helper.remove();
  }
}

async function removeEverythingOf(api: DockerApi, serverId: string): Promise<void> {
  const filters = labelFilter({ [LABEL.serverId]: serverId });
  const containers = await api.json<{ Id: string }[]>('GET', '/containers/json', { query: { all: 1, filters } });
  for (const container of containers) await api.json('DELETE', `/containers/${container.Id}`, { query: { force: 1 }, accept: [404] });
  const volumes = (await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
  for (const volume of volumes) await api.json('DELETE', `/volumes/${volume.Name}`, { accept: [404] });
}

/** True once the bundled app's health path answers 200 on this machine's published port. */
async function answersHealth(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

function printReport(figures: DockerBenchFigures): void {
  const row = (label: string, docker: Spread, local: Spread) =>
    `  ${label.padEnd(10)} docker median ${String(docker.medianMs).padStart(7)} ms  max ${String(docker.maxMs).padStart(7)} ms` +
    `   local median ${String(local.medianMs).padStart(7)} ms  max ${String(local.maxMs).padStart(7)} ms   = ${round1(docker.medianMs / local.medianMs)}x`;
  const { docker, local, dockerCp, dockerCpCompressed, dockerStartByHand, copy, dockerCpCopy, ratios, target } = figures as Required<DockerBenchFigures>;
  console.log([
    `docker: one ERP service with a ${figures.databaseMb} MB database on a Docker server and one on the local driver, ${figures.rounds} rounds`,
    ...STEPS.map((step) => row(step, docker[step], local[step])),
    `  docker cp of its data (archive GET to a file)  median ${dockerCp.medianMs} ms  max ${dockerCp.maxMs} ms; Docker backup = ${ratios.backupOverDockerCp}x`,
    `  the same through zstd -1 and SHA-256           median ${dockerCpCompressed.medianMs} ms  max ${dockerCpCompressed.maxMs} ms; Docker backup = ${ratios.backupOverDockerCpCompressed}x`,
    `  the same container started by hand (start call, health polled every 5 ms)  median ${dockerStartByHand.medianMs} ms  max ${dockerStartByHand.maxMs} ms; ours = ${ratios.startOverDockerStartByHand}x`,
    `  copy through the API  median ${copy.medianMs} ms  max ${copy.maxMs} ms; docker cp into a new volume median ${dockerCpCopy.medianMs} ms` +
      ` max ${dockerCpCopy.maxMs} ms; copy = ${ratios.copyOverDockerCp}x`,
    `  targets: start within ${target.startWithinLocalTimes}x local (${ratios.startDockerOverLocal}x), backup within ` +
      `${target.backupWithinDockerCpTimes}x docker cp (${ratios.backupOverDockerCp}x): ${target.met ? 'met' : 'NOT met'}`,
  ].join('\n'));
}

// Run directly: node dist/bench/docker.bench.js
if (import.meta.url === `file://${process.argv[1]}`) await dockerBench();
