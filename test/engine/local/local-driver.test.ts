// The local driver against real processes: it never runs a service twice, never kills a pid it
// has not recognised as the service's own, and explains a failed start in words.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DriverError, type ServiceSpec } from '../../../src/engine/driver.js';
import { DATABASE_FILE } from '../../../src/engine/erp-app/config.js';
import { LocalDriver } from '../../../src/engine/local/local-driver.js';
import { tempDataDir } from '../../support/fixtures.js';
import { killProcessesMatching, processesMatching, tryConnect } from '../support/engine-http.js';

const noHooks = { portAssigned: async () => undefined, spawned: async () => undefined };

describe.skipIf(process.platform !== 'linux')('LocalDriver', () => {
  const dataDir = tempDataDir();
  const driver = new LocalDriver({ dataDir, takenPorts: async () => new Set(), startTimeoutMs: 5000 });
  const spec = (id: string, changes: Partial<ServiceSpec> = {}): ServiceSpec => ({
    id, name: id, revision: 1, port: null, pid: null, outgoingSmtp: null, parentId: null, server: { id: 'srv_localdrivertest00000', rootDir: null, docker: null }, ...changes,
  });
  afterAll(async () => {
    expect(await killProcessesMatching(dataDir)).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps a copy\'s mail password sealed in its service directory, in no file in clear, and gives it to the process', async () => {
    const service = spec('svc_mailsealed00000000', { outgoingSmtp: '127.0.0.1:2525', parentId: 'svc_parent00000000000000' });
    const password = 'clear-mail-password-4b1d';
    await driver.storeMailCredentials(service, { username: 'copy-user', password });
    const running = await driver.start(service, noHooks);
    const dir = driver.serviceDir(service);
    const files = readdirSync(dir).filter((name) => statSync(join(dir, name)).isFile());
    expect(files).toEqual(expect.arrayContaining(['mail-credentials.json', 'service.json']));
    for (const name of files) expect(readFileSync(join(dir, name)).includes(password), name).toBe(false);
    const stored = JSON.parse(readFileSync(join(dir, 'mail-credentials.json'), 'utf8')) as { username: string; password: string };
    expect(stored).toEqual({ username: 'copy-user', password: expect.stringMatching(/^tsec1:/) });
    expect(readFileSync(`/proc/${running.pid}/environ`, 'utf8').split('\0')).toContain(`TEAMINFRA_SMTP_PASSWORD=${password}`);
    await driver.stop(service);
  });

  it('adopts the running process when asked to start a service that already runs, instead of starting another', async () => {
    const service = spec('svc_adopt00000000000000');
    const first = await driver.start(service, noHooks);
    // As after a crash: the database has lost the pid and port, the service's directory has not.
    const second = await driver.start(service, noHooks);
    expect(second).toEqual(first);
    expect(processesMatching(service.id)).toEqual([first.pid]);
    await driver.stop(service);
    expect(processesMatching(service.id)).toEqual([]);
    expect(await tryConnect(first.port)).toBe('ECONNREFUSED');
  });

  it('restarts on the asked revision when the running process has another one', async () => {
    const service = spec('svc_revision0000000000');
    const first = await driver.start(service, noHooks);
    const next = await driver.start({ ...service, revision: 2 }, noHooks);
    expect(next).toMatchObject({ revision: 2, port: first.port });
    expect(next.pid).not.toBe(first.pid);
    expect(processesMatching(service.id)).toEqual([next.pid]);
    await driver.stop(service);
  });

  it('reports stopped, and kills nothing, when a recorded pid now belongs to another program', async () => {
    const stranger = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const service = spec('svc_reusedpid00000000000', { pid: stranger.pid as number });
      await driver.provision(service);
      expect(await driver.status(service)).toEqual({ state: 'stopped' });
      await driver.stop(service);
      expect(stranger.exitCode).toBeNull();
      expect(() => process.kill(stranger.pid as number, 0)).not.toThrow();
    } finally {
      stranger.kill('SIGKILL');
    }
  });

  it('fails a start with the process\'s own last words when it ends while starting', async () => {
    const service = spec('svc_brokendb0000000000');
    // A directory where the database file should be: the application cannot open it.
    mkdirSync(join(driver.serviceDir(service), DATABASE_FILE), { recursive: true });
    const failure = await driver.start(service, noHooks).then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(DriverError);
    expect((failure as DriverError).reason).toMatch(/^The ERP service's process ended while starting \(exit code 1\): .+/);
    expect((failure as DriverError).portUnusable).toBe(false);
    expect(processesMatching(service.id)).toEqual([]);
  });

  it('stops idempotently and removes everything on destroy', async () => {
    const service = spec('svc_destroy00000000000');
    await driver.start(service, noHooks);
    await driver.stop(service);
    await driver.stop(service);
    await driver.destroy(service);
    expect(processesMatching(service.id)).toEqual([]);
    expect(await driver.status(service)).toEqual({ state: 'stopped' });
  });
});
