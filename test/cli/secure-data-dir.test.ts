// The data directory is the running user's alone: `teaminfra serve` creates everything in it
// owner-only (the database, services' files, backups, caught emails), tightens what an earlier
// version left readable, and refuses a directory other users can write. Real child processes.
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { act, killProcessesMatching, send } from '../engine/support/engine-http.js';

/** Every path under `dir` (itself included) whose mode lets its group or other users in. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) found.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

/** The output of a `serve` that must refuse to start (one that starts anyway is stopped, and fails the test). */
async function refusedServe(dataDir: string): Promise<string> {
  const started = await startServe(dataDir).then((serve) => serve, (error: Error) => error.message);
  if (typeof started === 'string') return started;
  await started.stop();
  throw new Error(`serve started on ${dataDir}:\n${started.output()}`);
}

/** A team with a server, a service and a full-access token, made by the operator command line. */
async function seed(dataDir: string) {
  const { serviceId: service, token } = await seedThroughCli(dataDir, { team: 'Acme', server: 'eu-1', service: 'Shop', token: 't' });
  return { service, token };
}

describe('the data directory', () => {
  const parents: string[] = [];
  let serve: ServeProcess | undefined;
  const freshParent = () => {
    const parent = tempDataDir();
    parents.push(parent);
    return parent;
  };
  afterAll(async () => {
    await serve?.stop();
    for (const parent of parents) {
      await killProcessesMatching(parent);
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('holds only owner-only files and folders when serve has run a copy that caught an email and taken a backup', async () => {
    const dataDir = join(freshParent(), 'data');
    const { service, token } = await seed(dataDir);
    serve = await startServe(dataDir);
    expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${service}/start`)).state).toBe('succeeded');
    expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${service}/backups`)).state).toBe('succeeded');
    const copy = (await act(serve.baseUrl, token, 'POST', `/api/service-erp/${service}/copies`, {})).service_id as string;
    expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${copy}/start`)).state).toBe('succeeded');
    const copyUrl = (await send(serve.baseUrl, 'GET', `/api/service-erp/${copy}`, token)).body.url as string;
    const reset = await fetch(`${copyUrl}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(reset.status).toBe(200);
    expect((await send(serve.baseUrl, 'GET', `/api/service-erp/${copy}/emails`, token)).body.data).toHaveLength(1);
    // The caught email itself is kept in the database (caught_emails.raw_message), not as a file.
    expect(readdirSync(join(dataDir, 'backups'), { recursive: true }).length).toBeGreaterThan(0);
    expect(openToOthers(dataDir)).toEqual([]);
    await serve.stop();
    serve = undefined;
  });

  it('is tightened to owner-only at start when an earlier version left it readable by all', async () => {
    const dataDir = join(freshParent(), 'data');
    await seed(dataDir);
    mkdirSync(join(dataDir, 'mail', 'svc_old'), { recursive: true });
    writeFileSync(join(dataDir, 'mail', 'svc_old', 'eml_old.eml'), 'Subject: reset link\r\n\r\nhttp://copy/reset?token=x\r\n');
    for (const path of [dataDir, join(dataDir, 'mail'), join(dataDir, 'mail', 'svc_old')]) chmodSync(path, 0o755);
    for (const name of readdirSync(dataDir)) if (name.startsWith('teaminfra.sqlite')) chmodSync(join(dataDir, name), 0o644);
    chmodSync(join(dataDir, 'mail', 'svc_old', 'eml_old.eml'), 0o644);
    expect(openToOthers(dataDir).length).toBeGreaterThan(3);

    serve = await startServe(dataDir);
    expect(openToOthers(dataDir)).toEqual([]);
    await serve.stop();
    serve = undefined;
  });

  it('is tightened to owner-only by an admin command too, when an earlier version left it group-readable', async () => {
    const dataDir = join(freshParent(), 'data');
    await seed(dataDir);
    chmodSync(dataDir, 0o750);
    for (const name of readdirSync(dataDir)) if (name.startsWith('teaminfra.sqlite')) chmodSync(join(dataDir, name), 0o640);
    expect(openToOthers(dataDir).length).toBeGreaterThan(1);
    const result = await runCli(['admin', 'create-team', '--name', 'B', '--data-dir', dataDir]);
    expect(result.code, result.stderr).toBe(0);
    expect(openToOthers(dataDir)).toEqual([]);
  });

  it('refuses serve and admin on a directory other users can write, naming it and the fix', async () => {
    const dataDir = join(freshParent(), 'data');
    await seed(dataDir);
    chmodSync(dataDir, 0o777);
    const refusal = `The data directory ${dataDir} can be written by other users (mode 777)`;
    const output = await refusedServe(dataDir);
    expect(output).toContain('serve exited with 1');
    expect(output).toContain(refusal);
    expect(output).toContain(`fix it with: chmod 700 ${dataDir}`);
    const result = await runCli(['admin', 'create-team', '--name', 'B', '--data-dir', dataDir]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(refusal);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses serve on a directory that belongs to another user, with the fix', async () => {
    const dataDir = join(freshParent(), 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, 4242, 4242);
    const output = await refusedServe(dataDir);
    expect(output).toContain('serve exited with 1');
    expect(output).toContain(`The data directory ${dataDir} belongs to user 4242, not to the user running teaminfra (0)`);
    expect(output).toContain(`chown -R 0 ${dataDir} && chmod 700 ${dataDir}`);
  });
});
