// The local driver's backup, restore and copy against real service processes: a backup is one
// consistent state even while another process writes; a restore swaps the database under a
// stopped service and starts it again; a bad backup or a failed step leaves the service's data
// as it was, running; a copy sends its mail to the relay it is given, never to its own setting.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DriverError, type RestoreHooks, type ServiceSpec } from '../../../src/engine/driver.js';
import { DATABASE_FILE } from '../../../src/engine/erp-app/config.js';
import { openErpDatabase } from '../../../src/engine/erp-app/database.js';
import { packDatabase, unpackVerified } from '../../../src/engine/local/backup-archive.js';
import { LocalDriver } from '../../../src/engine/local/local-driver.js';
import { tempDataDir } from '../../support/fixtures.js';
import { fetchText, killProcessesMatching, processesMatching } from '../support/engine-http.js';
import { startSmtpSink } from '../support/smtp-sink.js';

const noHooks = { portAssigned: async () => undefined, spawned: async () => undefined };
const restoreHooks = (
  beforeSwap: () => Promise<void> = async () => undefined, seen: (current: { hasData: boolean }) => void = () => undefined,
  ranBefore = false,
): RestoreHooks => ({
  ...noHooks,
  ranBefore,
  async beforeSwap(current) {
    seen(current);
    await beforeSwap();
  },
});
const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

describe.skipIf(process.platform !== 'linux')('LocalDriver backups, restores and copies', () => {
  const dataDir = tempDataDir();
  let relay: string | null = null;
  const driver = new LocalDriver({ dataDir, takenPorts: async () => new Set(), startTimeoutMs: 5000, copyMailRelay: () => relay });
  const spec = (id: string, changes: Partial<ServiceSpec> = {}): ServiceSpec => ({
    id, name: id, revision: 1, port: null, pid: null, outgoingSmtp: null, parentId: null,
    server: { id: 'srv_backupdrivertest0000', rootDir: null, docker: null }, ...changes,
  });
  const databaseOf = (service: ServiceSpec) => join(driver.serviceDir(service), DATABASE_FILE);
  const countRows = (file: string, table: 'customers' | 'products'): number => {
    const db = new SQLite(file, { readonly: true });
    const { count } = db.prepare(`SELECT count(*) AS count FROM ${table}`).get() as { count: number };
    db.close();
    return count;
  };
  // Products: no other table refers to them.
  const deleteProducts = (service: ServiceSpec) => {
    const db = new SQLite(databaseOf(service));
    db.pragma('busy_timeout = 5000');
    db.exec('DELETE FROM products');
    db.close();
  };
  afterAll(async () => {
    expect(await killProcessesMatching(dataDir)).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('backs up one consistent state of a database that another process writes to meanwhile', async () => {
    const service = spec('svc_busybackup000000000');
    await driver.provision(service);
    // Each transaction adds two customers to the five seeded: a consistent snapshot holds an odd number.
    const writer: ChildProcess = spawn(process.execPath, ['-e', `
      const db = new (require(${JSON.stringify(betterSqlite)}))(${JSON.stringify(databaseOf(service))});
      db.pragma('busy_timeout = 5000');
      const add = db.prepare("INSERT INTO customers (name, city) VALUES (?, 'Ghent')");
      const pair = db.transaction(() => { add.run('x'.repeat(2000)); add.run('y'.repeat(2000)); });
      for (;;) pair();`], { stdio: 'ignore' });
    try {
      // The writer must really be writing when the backup starts (a loaded machine starts it slowly).
      const deadline = Date.now() + 30_000;
      while (countRows(databaseOf(service), 'customers') <= 5 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const destination = join(dataDir, 'busy.sqlite.zst');
      const file = await driver.backup(service, destination);
      const unpacked = join(dataDir, 'busy-unpacked.sqlite');
      await unpackVerified(file.path, file.sha256, unpacked);
      const count = countRows(unpacked, 'customers');
      expect(count).toBeGreaterThan(5);
      expect(count % 2).toBe(1);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('restores a running service: the rows come back and it runs again', async () => {
    const service = spec('svc_restorerunning00000');
    const before = await driver.start(service, noHooks);
    const backup = await driver.backup(service, join(dataDir, 'running.sqlite.zst'));
    deleteProducts(service);
    expect((await fetchText(`http://127.0.0.1:${before.port}/`)).text).toContain('Products: 0');

    let stoppedForSafety = false;
    const running = await driver.restore({ ...service, port: before.port }, backup, restoreHooks(async () => {
      stoppedForSafety = processesMatching(service.id).length === 0;
    }));
    expect(stoppedForSafety).toBe(true);
    expect(running).toMatchObject({ port: before.port });
    expect(running?.pid).not.toBe(before.pid);
    expect((await fetchText(`http://127.0.0.1:${before.port}/`)).text).toContain('Products: 5');
    expect(readdirSync(driver.serviceDir(service)).filter((name) => /previous|restoring/.test(name))).toEqual([]);
    await driver.stop(service);
  });

  it('restores a stopped service without starting it', async () => {
    const service = spec('svc_restorestopped00000');
    await driver.provision(service);
    const backup = await driver.backup(service, join(dataDir, 'stopped.sqlite.zst'));
    deleteProducts(service);
    expect(await driver.restore(service, backup, restoreHooks())).toBeNull();
    expect(countRows(databaseOf(service), 'products')).toBe(5);
    expect(processesMatching(service.id)).toEqual([]);
  });

  it('starts a stopped service on the restored data when it ran before the restore was asked (a resumed restore)', async () => {
    const service = spec('svc_restoreresumed00000');
    await driver.provision(service);
    const backup = await driver.backup(service, join(dataDir, 'resumed.sqlite.zst'));
    deleteProducts(service);
    const running = await driver.restore(service, backup, restoreHooks(undefined, undefined, true));
    expect(running).toMatchObject({ pid: expect.any(Number), port: expect.any(Number) });
    expect((await fetchText(`http://127.0.0.1:${running?.port}/`)).text).toContain('Products: 5');
    expect(processesMatching(service.id)).toEqual([running?.pid]);
    await driver.stop(service);
  });

  it('changes nothing, and stops nothing, when the backup is bad', async () => {
    const service = spec('svc_restorebad000000000');
    const before = await driver.start(service, noHooks);
    const backup = await driver.backup(service, join(dataDir, 'bad.sqlite.zst'));
    deleteProducts(service);
    const failure = await driver.restore({ ...service, port: before.port }, { path: backup.path, sha256: '0'.repeat(64) }, restoreHooks())
      .then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(DriverError);
    expect((failure as DriverError).reason).toMatch(/^The backup file does not match its SHA-256 checksum/);
    expect(processesMatching(service.id)).toEqual([before.pid]);
    expect(countRows(databaseOf(service), 'products')).toBe(0);
    await driver.stop(service);
  });

  it('puts the service back on its data and starts it again when the safety step fails', async () => {
    const service = spec('svc_restorenosafety0000');
    const before = await driver.start(service, noHooks);
    const backup = await driver.backup(service, join(dataDir, 'nosafety.sqlite.zst'));
    deleteProducts(service);
    const failure = await driver.restore({ ...service, port: before.port }, backup, restoreHooks(async () => {
      throw new DriverError('no room for the safety backup');
    })).then(() => undefined, (error: unknown) => error);
    expect((failure as DriverError).reason).toBe('no room for the safety backup');
    expect(processesMatching(service.id)).toHaveLength(1);
    expect((await fetchText(`http://127.0.0.1:${before.port}/`)).text).toContain('Products: 0');
    expect(existsSync(`${databaseOf(service)}.previous`)).toBe(false);
    await driver.stop(service);
  });

  it('puts the previous database back and starts it when the service does not start on the restored one', async () => {
    const service = spec('svc_restorenostart00000');
    const before = await driver.start(service, noHooks);
    deleteProducts(service);
    // Sound, with the ERP tables, yet the application cannot open it: an index holds a table's name.
    const crafted = join(dataDir, 'crafted.sqlite');
    const db = openErpDatabase(crafted);
    db.exec('DROP TABLE outgoing_mail; CREATE INDEX outgoing_mail ON customers (city)');
    db.close();
    const backup = await packDatabase(crafted, join(dataDir, 'crafted.sqlite.zst'));

    const failure = await driver.restore({ ...service, port: before.port }, { path: join(dataDir, 'crafted.sqlite.zst'), sha256: backup.sha256 },
      restoreHooks()).then(() => undefined, (error: unknown) => error);
    expect((failure as DriverError).reason).toMatch(new RegExp(
      '^The service did not start on the restored database \\(The ERP service\'s process ended while starting \\(exit code 1\\): .*' +
        'there is already an index named outgoing_mail.*\\), so its previous database was put back and it was started again\\. ' +
        'Nothing was restored\\.$'));
    expect((await fetchText(`http://127.0.0.1:${before.port}/`)).text).toContain('Products: 0');
    expect(processesMatching(service.id)).toHaveLength(1);
    expect(readdirSync(driver.serviceDir(service)).filter((name) => /previous|restoring/.test(name))).toEqual([]);
    await driver.stop(service);
  });

  it('restores into a service that never ran, with no safety backup to take', async () => {
    const source = spec('svc_restoresource000000');
    await driver.provision(source);
    const backup = await driver.backup(source, join(dataDir, 'source.sqlite.zst'));
    const empty = spec('svc_restoreempty0000000');
    let hadData: boolean | undefined;
    expect(await driver.restore(empty, backup, restoreHooks(async () => undefined, (current) => { hadData = current.hasData; }))).toBeNull();
    expect(hadData).toBe(false);
    expect(countRows(databaseOf(empty), 'products')).toBe(5);
  });

  it('copies a running service\'s database, and gives a copy of a never-started service a fresh one', async () => {
    const source = spec('svc_copysource000000000');
    await driver.start(source, noHooks);
    deleteProducts(source);
    const copy = spec('svc_copytarget000000000', { parentId: source.id });
    await driver.copy(source, copy);
    expect(countRows(databaseOf(copy), 'products')).toBe(0);
    await driver.stop(source);

    const fresh = spec('svc_copyfresh0000000000', { parentId: 'svc_neverstarted0000000' });
    await driver.copy(spec('svc_neverstarted0000000'), fresh);
    expect(countRows(databaseOf(fresh), 'products')).toBe(5);
    expect(existsSync(driver.serviceDir(spec('svc_neverstarted0000000')))).toBe(false);
  });

  it('sends a copy\'s mail to the relay it is given, never to its own outgoing-mail setting', async () => {
    const [own, catcher] = [await startSmtpSink(), await startSmtpSink()];
    try {
      relay = `127.0.0.1:${catcher.port}`;
      const copy = spec('svc_copymail00000000000', { parentId: 'svc_copymailparent00000', outgoingSmtp: `127.0.0.1:${own.port}` });
      const running = await driver.start(copy, noHooks);
      const reset = await fetch(`http://127.0.0.1:${running.port}/web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
      expect(reset.status).toBe(200);
      expect(catcher.messages).toHaveLength(1);
      expect(own.messages).toHaveLength(0);

      relay = null;
      await driver.stop(copy);
      await driver.start({ ...copy, port: running.port }, noHooks);
      const refused = await fetch(`http://127.0.0.1:${running.port}/web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
      expect(refused.status).toBe(503);
      expect(own.messages).toHaveLength(0);
      await driver.stop(copy);
    } finally {
      await own.close();
      await catcher.close();
    }
  });
});
