// Backups and restores of a Tryton service (PostgreSQL and Tryton in their own containers) on a
// real Docker engine, through REST as a team would: one archive holding the database's
// pg_dump and the app's files, downloaded byte for byte; a restore after a change takes the
// change away, keeps a safety backup, and restarts the service at the same url; a damaged
// backup (cut short inside a well-formed archive with a right checksum, or with a byte changed)
// fails and leaves the service exactly as it was. The service's secrets are in no answer.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pack as tarPack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppImages } from '../../../src/engine/apps/images/build-app-images.js';
import { compressToFile } from '../../../src/engine/backup-compression.js';
import { readServiceSecrets } from '../../../src/engine/docker/service-secrets.js';
import { insertCompletedBackup, type SeededTeam, type TestServer } from '../../support/fixtures.js';
import { waitForOperation } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam } from './support/docker-team.js';
import { engineObjectsOf as objectsOnEngine, teamCalls } from './support/team-calls.js';
import { archiveEntries, createParty, partyNames, rpc, tryton, TRYTON_START_MS, trytonSession } from './support/tryton-app.js';

/** Restores start the service again: its web container is new, so the migrate step runs before it (a minute on a shared machine). */
const RESTORE_MS = TRYTON_START_MS;
/** The attachment kept in Tryton's file store (the service's "files" volume): random, so it is as large in the archive. */
const ATTACHMENT = randomBytes(8 * 1024 * 1024);

describe.runIf(dockerAvailable)('backups and restores of a Tryton service on a Docker server', () => {
  const api = testDockerApi();
  const scratch = mkdtempSync(join(tmpdir(), 'tryton-backups-'));
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let url: string;
  let password: string;
  let session: string;
  let backupId: string;
  let archive: Buffer;
  /** The backup scheduler's clock, moved by the test (it ticks only when the test asks). */
  const clock = { now: Date.now() };

  const { answers, call, actAndWait } = teamCalls(() => server.baseUrl, () => token);
  const engineObjectsOf = (id: string) => objectsOnEngine(api, id);
  const download = async (id: string) => {
    const response = await fetch(`${server.baseUrl}/api/backups/${id}/download`, { headers: { Authorization: `Bearer ${token}` } });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  };
  /** Everything a team sees of the service: its state and url, its parties, its attachment. */
  const whatTheTeamSees = async () => {
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    const fresh = await trytonSession(service.url, 'admin', password);
    const attachments = await rpc(service.url, 'model.ir.attachment.search_read', [[], 0, null, null, ['name', 'data'], {}], fresh);
    return {
      state: service.state, url: service.url, parties: await partyNames(service.url, fresh),
      attachments: (attachments.result as { name: string; data: { base64: string } }[]).map((each) => ({
        name: each.name, sha256: createHash('sha256').update(Buffer.from(each.data.base64, 'base64')).digest('hex'),
      })),
    };
  };

  beforeAll(async () => {
    await buildAppImages(api, tryton, () => undefined);
    const docker = await startDockerTeam({ engine: { clock: () => clock.now, backupScheduleIntervalMs: 0 } });
    ({ server, team, token } = docker);
    serverId = await docker.addServer('docker-backups');
    const accepted = await call('POST', '/api/service-erp', { server_id: serverId, name: 'Tryton', app: 'tryton' });
    serviceId = accepted.body.service_id;
    const created = await waitForOperation(server.baseUrl, token, accepted.body.id, 120_000);
    password = created.result.initial_credentials.password;
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, TRYTON_START_MS)).toMatchObject({ state: 'succeeded' });
    url = (await call('GET', `/api/service-erp/${serviceId}`)).body.url;
    session = await trytonSession(url, 'admin', password);
    const partyId = await createParty(url, session, 'Acme Hosting');
    const attached = await rpc(url, 'model.ir.attachment.create', [[{
      name: 'contract.bin', resource: `party.party,${partyId}`, data: { __class__: 'bytes', base64: ATTACHMENT.toString('base64') },
    }], {}], session);
    expect(attached.status, JSON.stringify(attached.error)).toBe(200);
  }, TRYTON_START_MS + 20 * 60_000);

  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  it('backs up the running service as one archive: its manifest, the pg_dump of its database and its file store', async () => {
    const done = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, 10 * 60_000);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
    backupId = done.backup_id;
    const backup = (await call('GET', `/api/backups/${backupId}`)).body;
    expect(backup).toMatchObject({ state: 'completed', service_id: serviceId });
    // The service served all along: a backup is taken while it runs.
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body).toMatchObject({ state: 'running', url });

    const downloaded = await download(backupId);
    expect(downloaded.status).toBe(200);
    expect(createHash('sha256').update(downloaded.bytes).digest('hex')).toBe(backup.sha256);
    expect(downloaded.bytes.length).toBe(backup.size_bytes);
    archive = downloaded.bytes;
    const entries = await archiveEntries(archive, join(scratch, 'backup.tar.zst'), (name) => name === 'teaminfra-app.json' || name === 'database/tryton.dump');
    expect(entries[0]?.name).toBe('teaminfra-app.json');
    const manifest = JSON.parse(entries[0]!.bytes!.toString());
    expect(manifest).toMatchObject({ format: 1, app: 'tryton', databaseVolumes: ['database'], fileVolumes: ['files'] });
    // The images the data was made under, so that a restore under the same ones skips the migration.
    expect(Object.keys(manifest.images).sort()).toEqual(['database', 'tryton']);
    expect(manifest.images.tryton).toMatch(/^sha256:[0-9a-f]{64}$/);
    const dump = entries.find((entry) => entry.name === 'database/tryton.dump');
    // pg_dump's custom format begins with its signature.
    expect(dump?.bytes?.subarray(0, 5).toString()).toBe('PGDMP');
    expect(dump!.size).toBeGreaterThan(100_000);
    const stored = entries.filter((entry) => entry.name.startsWith('volumes/files/') && entry.type === 'file');
    expect(stored.map((entry) => entry.size)).toContain(ATTACHMENT.length);
    // Nothing of the backup's one-off containers is left on the engine.
    expect((await engineObjectsOf(serviceId)).containers.filter((name) => name.startsWith('helper:'))).toEqual([]);
  }, 11 * 60_000);

  it('restores the backup after a change: the change is gone, the attachment is whole, a safety backup holds the change', async () => {
    const before = await whatTheTeamSees();
    expect(before.parties).toEqual(['Acme Hosting']);
    await createParty(url, session, 'Added after the backup');
    expect((await whatTheTeamSees()).parties).toEqual(['Acme Hosting', 'Added after the backup']);

    const done = await actAndWait('POST', `/api/backups/${backupId}/restore`, RESTORE_MS, {});
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded', backup_id: backupId });
    expect(await whatTheTeamSees()).toEqual(before);

    const safeties = await server.app.db.kysely.selectFrom('backups').select('id').where('operation_id', '=', done.id).where('kind', '=', 'safety').execute();
    expect(safeties).toHaveLength(1);
    const safetyId = safeties[0]!.id;
    expect(done.result).toEqual({ safety_backup_id: safetyId });
    const safety = (await call('GET', `/api/backups/${safetyId}`)).body;
    expect(safety).toMatchObject({ state: 'completed', kind: 'safety', service_id: serviceId });
    const safetyEntries = await archiveEntries((await download(safetyId)).bytes, join(scratch, 'safety.tar.zst'), (name) => name === 'database/tryton.dump');
    // The dump of the data the restore replaced holds the party added after the backup (read with PostgreSQL's own pg_restore: its data is compressed).
    const safetyDump = join(scratch, 'safety.dump');
    writeFileSync(safetyDump, safetyEntries.find((entry) => entry.name === 'database/tryton.dump')!.bytes!);
    const parties = execFileSync('pg_restore', ['--data-only', '--table=party_party', '--file=-', safetyDump], { encoding: 'utf8' });
    expect(parties).toContain('Added after the backup');

    // One generation of data is left (the restored one), used by the service's two containers
    // behind its front (redeploys-and-mail.md); no staging network, no one-off container.
    const objects = await engineObjectsOf(serviceId);
    expect(objects.volumes).toEqual([`teaminfra-data-${serviceId}-database-g1`, `teaminfra-data-${serviceId}-files-g1`]);
    expect(objects.containers).toEqual([
      `front:/teaminfra-${serviceId}-front`, `service:/teaminfra-${serviceId}-r1-g1-database`, `service:/teaminfra-${serviceId}-r1-g1-tryton`,
    ]);
    expect([...objects.networks].sort()).toEqual([`teaminfra-front-${serviceId}`, `teaminfra-net-${serviceId}`]);
    session = await trytonSession(url, 'admin', password);
  }, RESTORE_MS + 60_000);

  it('a backup whose dump is cut short (well-formed archive, right checksum) fails in its staged database and leaves the service as it was', async () => {
    const before = await whatTheTeamSees();
    const objectsBefore = await engineObjectsOf(serviceId);
    const entries = await archiveEntries(archive, join(scratch, 'again.tar.zst'), () => true);
    const pack = tarPack();
    for (const entry of entries) {
      const bytes = entry.name === 'database/tryton.dump' ? entry.bytes!.subarray(0, Math.floor(entry.bytes!.length / 2)) : entry.bytes!;
      if (entry.type === 'directory') pack.entry({ name: entry.name, type: 'directory', mode: 0o1777 });
      else if (entry.type === 'file') pack.entry({ name: entry.name, size: bytes.length, mode: 0o644, uid: 101, gid: 104 }, bytes);
    }
    pack.finalize();
    const file = join(scratch, 'cut-short.tar.zst');
    const packed = await compressToFile(Readable.from(pack), file);
    const damagedId = await insertCompletedBackup(server.app, { teamId: team.teamId, serviceId, filePath: file, bytes: Buffer.alloc(0), sha256: packed.sha256 });

    const done = await actAndWait('POST', `/api/backups/${damagedId}/restore`, RESTORE_MS, {});
    expect(done.state).toBe('failed');
    expect(done.reason).toMatch(/^The backup could not be restored \(The app's (verify|restore) command failed \(exit code 1\).*\), so nothing was changed\.$/);
    expect(await whatTheTeamSees()).toEqual(before);
    expect(await engineObjectsOf(serviceId)).toEqual(objectsBefore);
    // Refused before the service was stopped: no safety backup was taken.
    const safeties = await server.app.db.kysely.selectFrom('backups').select('id').where('service_id', '=', serviceId).where('kind', '=', 'safety').execute();
    expect(safeties).toHaveLength(1);
  }, RESTORE_MS + 60_000);

  it('a backup with one byte changed fails on its checksum before anything is touched', async () => {
    const before = await whatTheTeamSees();
    const objectsBefore = await engineObjectsOf(serviceId);
    const changed = Buffer.from(archive);
    const middle = Math.floor(changed.length / 2);
    changed[middle] = changed[middle]! ^ 0xff;
    const file = join(scratch, 'changed.tar.zst');
    writeFileSync(file, changed);
    const sha256 = createHash('sha256').update(archive).digest('hex');
    const damagedId = await insertCompletedBackup(server.app, { teamId: team.teamId, serviceId, filePath: file, bytes: archive, sha256 });
    const done = await actAndWait('POST', `/api/backups/${damagedId}/restore`, 120_000, {});
    expect(done.state).toBe('failed');
    expect(done.reason).toContain('does not match its SHA-256 checksum');
    expect(await whatTheTeamSees()).toEqual(before);
    expect(await engineObjectsOf(serviceId)).toEqual(objectsBefore);
  }, 180_000);

  it('backs up and restores a stopped service, which stays stopped', async () => {
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/stop`, 120_000)).toMatchObject({ state: 'succeeded' });
    const backedUp = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, 10 * 60_000);
    expect(backedUp).toMatchObject({ state: 'succeeded' });
    const restored = await actAndWait('POST', `/api/backups/${backedUp.backup_id}/restore`, RESTORE_MS, {});
    expect(restored, JSON.stringify(restored)).toMatchObject({ state: 'succeeded' });
    expect((await call('GET', `/api/service-erp/${serviceId}`)).body).toMatchObject({ state: 'stopped' });
    // Stopped: every container exited, none of a one-off kind left.
    const objects = await engineObjectsOf(serviceId);
    expect(objects.containers.filter((name) => name.startsWith('helper:'))).toEqual([]);
    expect(objects.volumes).toEqual([`teaminfra-data-${serviceId}-database-g2`, `teaminfra-data-${serviceId}-files-g2`]);
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, TRYTON_START_MS)).toMatchObject({ state: 'succeeded' });
    expect((await whatTheTeamSees()).parties).toEqual(['Acme Hosting']);
  }, RESTORE_MS + TRYTON_START_MS + 12 * 60_000);

  it('takes its scheduled backup when its slot comes, as any service: kind scheduled, its database dumped', async () => {
    // The first tick gives the service its schedule (the team's default: daily); a day later its slot is due.
    await server.app.engine.scheduler.tick();
    clock.now = Date.now() + 25 * 3_600_000;
    const { queued } = await server.app.engine.scheduler.tick();
    const ours = await server.app.db.kysely.selectFrom('backups').select(['id', 'operation_id'])
      .where('id', 'in', queued.length > 0 ? queued : ['none']).where('service_id', '=', serviceId).execute();
    expect(ours).toHaveLength(1);
    const done = await waitForOperation(server.baseUrl, token, ours[0]!.operation_id!, 10 * 60_000);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded' });
    expect((await call('GET', `/api/backups/${ours[0]!.id}`)).body).toMatchObject({ state: 'completed', kind: 'scheduled', service_id: serviceId });
    const entries = await archiveEntries((await download(ours[0]!.id)).bytes, join(scratch, 'scheduled.tar.zst'));
    expect(entries.map((entry) => entry.name)).toEqual(expect.arrayContaining(['teaminfra-app.json', 'database/tryton.dump']));
  }, 11 * 60_000);

  it('the service\'s database and admin passwords are in no answer and no reason', async () => {
    const secrets = await readServiceSecrets(server.app.db.kysely, server.app.secrets, serviceId);
    expect(Object.keys(secrets).sort()).toEqual(['ADMIN_PASSWORD', 'DB_PASSWORD']);
    const operations = await server.app.db.kysely.selectFrom('operations').select(['reason', 'result', 'parameters']).execute();
    const backups = await server.app.db.kysely.selectFrom('backups').select(['reason', 'file_path']).execute();
    for (const text of [...answers, JSON.stringify(operations), JSON.stringify(backups)]) {
      expect(text).not.toContain(secrets.DB_PASSWORD);
      expect(text).not.toContain(secrets.ADMIN_PASSWORD);
    }
  });
});
