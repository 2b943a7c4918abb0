// The recovery half of the off-site benchmark (offsite.bench.ts): recover_erp_service of a Tryton
// service of BENCH_TRYTON_PARTIES parties (20,000 by default), from its request to the operation's
// end (the off-site object fetched, decrypted and checked, the service provisioned on the new
// server, the backup staged and restored, Tryton started and answering), against the same dump
// (the one in the backup's archive) restored by hand with `pg_restore` into a fresh PostgreSQL
// container of the same image on the same engine (from `docker run` to the end of `pg_restore`:
// a floor, no Tryton, no fetch). Both servers are on one engine: the lost one's objects are
// removed from it (its disk died) before the recovery, and the node's copy of the backup too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDockerServer } from '../../src/cli/docker-commands.js';
import { bundledApp } from '../../src/engine/apps/bundled-apps.js';
import { localBackupFile } from '../../src/engine/docker/backup-store.js';
import { DockerApi } from '../../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../../src/engine/docker/engine-address.js';
import { buildErpImage } from '../../src/engine/docker/erp-image.js';
import { markServerLost } from '../../src/engine/lost-server.js';
import { setBackupDestination } from '../../src/offsite/destinations.js';
import type { TestObjectStore } from '../../test/offsite/support/object-store-server.js';
import { startEngineBenchServer } from './engine-server.js';
import { envNumber } from './settings.js';
import { docker, fillParties, partyCount, removeEverythingOf, shell, trytonUnavailable } from './tryton-by-hand.js';

export interface RecoverFigures {
  parties: number;
  backupMb: number;
  /** recover_erp_service, request to end. */
  recoverMs: number;
  /** docker run of a fresh PostgreSQL container of the same image, pg_restore of the same dump. */
  pgRestoreByHandMs: number;
  recoverOverByHand: number;
  /** Making the service, its parties, its backup and its off-site copy (not measured against anything). */
  setupMs: number;
}

export async function recoverAgainstPgRestore(store: TestObjectStore): Promise<RecoverFigures | { skipped: string }> {
  const host = process.env.TEAMINFRA_BENCH_DOCKER_HOST || 'unix:///var/run/docker.sock';
  const api = new DockerApi(parseEngineAddress(host));
  const tryton = bundledApp('tryton')!;
  const unavailable = await trytonUnavailable(api, host, tryton);
  if (unavailable) {
    await api.close();
    console.log(`recover: SKIPPED, ${unavailable}`);
    return { skipped: unavailable };
  }
  const bench = await startEngineBenchServer('offsite-recover');
  const { app, dataDir, teamId, call, timed } = bench;
  const db = app.db.kysely;
  const scratch = mkdtempSync(join(tmpdir(), 'bench-recover-'));
  const servers: string[] = [];
  const byHandName = `teaminfra-bench-pg-restore-${process.pid}`;
  try {
    const setupStarted = performance.now();
    const parties = Math.round(envNumber('BENCH_TRYTON_PARTIES', 20_000));
    await setBackupDestination(db, app.secrets, teamId, {
      endpoint: store.endpoint, region: store.region, bucket: store.bucket, prefix: 'recover/', accessKeyId: store.accessKeyId,
      secretAccessKey: store.secretAccessKey, allowPrivate: true,
    });
    const { image } = await buildErpImage(api);
    const lost = await createDockerServer(db, { teamId, name: 'lost', dockerHost: host, image });
    servers.push(lost);
    const rescue = await createDockerServer(db, { teamId, name: 'rescue', dockerHost: host, image });
    servers.push(rescue);
    const created = await timed('POST', '/api/service-erp', { server_id: lost, name: 'Tryton', app: 'tryton' }, 20);
    const serviceId = created.operation.service_id as string;
    const password = created.operation.result.initial_credentials.password as string;
    await timed('POST', `/api/service-erp/${serviceId}/start`, undefined, 20);
    await fillParties(((await call('GET', `/api/service-erp/${serviceId}`)).body.url as string).replace(/\/$/, ''), password, parties);
    const backupId = (await timed('POST', `/api/service-erp/${serviceId}/backups`, undefined, 20)).operation.backup_id as string;
    const deadline = Date.now() + 600_000;
    while ((await db.selectFrom('backup_offsite_copies').select('state').where('backup_id', '=', backupId).executeTakeFirst())?.state !== 'stored') {
      if (Date.now() > deadline) throw new Error('the backup was not stored off-site within 10 minutes');
      await sleep(200);
    }
    const backup = await db.selectFrom('backups').select(['file_path', 'sha256', 'size_bytes']).where('id', '=', backupId).executeTakeFirstOrThrow();
    // The dump the recovery restores, out of the backup's archive, for the hand restore.
    const dump = join(scratch, 'tryton.dump');
    const held = await localBackupFile(db, dataDir, { path: backup.file_path!, sha256: backup.sha256! });
    try {
      await shell(`tar --zstd -xOf ${held.path} --wildcards 'database/*.dump' > ${dump}`);
    } finally {
      held.release(true);
    }
    const setupMs = performance.now() - setupStarted;

    // The server's disk dies: its engine objects (the service's containers and volumes, the backups volume) and the node's copy go.
    await markServerLost(db, lost);
    await removeEverythingOf(api, lost);
    rmSync(join(dataDir, 'backups', serviceId), { recursive: true, force: true });
    const recovered = await timed('POST', `/api/service-erp/${serviceId}/recover`, { server_id: rescue }, 20);
    const url = ((await call('GET', `/api/service-erp/${serviceId}`)).body.url as string).replace(/\/$/, '');
    const count = await partyCount(url, password);
    if (count < parties) throw new Error(`the recovered service has ${count} parties, not ${parties}`);

    const started = performance.now();
    docker('run', '--detach', '--name', byHandName, '--user', 'postgres', '--env', 'POSTGRES_USER=tryton', '--env', 'POSTGRES_DB=tryton',
      '--env', 'POSTGRES_PASSWORD=bench', '--env', 'PGHOST=127.0.0.1', '--env', 'PGUSER=tryton', '--env', 'PGPASSWORD=bench', '--env', 'PGDATABASE=tryton',
      tryton.containers.find((container) => container.name === 'database')!.image);
    await shell(`until docker exec ${byHandName} pg_isready --quiet --host 127.0.0.1 --username tryton --dbname tryton; do sleep 0.05; done`);
    await shell(`docker exec -i ${byHandName} pg_restore --no-owner --single-transaction --dbname=tryton < ${dump}`);
    const pgRestoreByHandMs = performance.now() - started;

    const figures: RecoverFigures = {
      parties, backupMb: Math.round(Number(backup.size_bytes) / 1024 / 102.4) / 10, recoverMs: Math.round(recovered.ms),
      pgRestoreByHandMs: Math.round(pgRestoreByHandMs), recoverOverByHand: Math.round((recovered.ms / pgRestoreByHandMs) * 10) / 10, setupMs: Math.round(setupMs),
    };
    console.log(`recover_erp_service of a Tryton service of ${parties} parties (backup ${figures.backupMb} MB) onto another server of the same engine:`);
    console.log(`  recover_erp_service (fetch, decrypt, check, provision, restore, start): ${figures.recoverMs} ms`);
    console.log(`  by hand (docker run of the same PostgreSQL image, pg_restore of the same dump): ${figures.pgRestoreByHandMs} ms`);
    console.log(`  = ${figures.recoverOverByHand}x; making the service, its parties, backup and off-site copy took ${(setupMs / 1000).toFixed(0)} s`);
    return figures;
  } finally {
    try { docker('rm', '--force', '--volumes', byHandName); } catch { /* never made */ }
    await bench.close();
    for (const id of servers) await removeEverythingOf(api, id);
    await api.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
