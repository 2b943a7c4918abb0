// `teaminfra admin add-app` and `list-apps` as an operator runs them: one JSON object on stdout,
// and a refused definition exits non-zero with the sentences saying why on stderr.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, runCli } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

describe('teaminfra admin add-app / list-apps', () => {
  let dataDir: string;
  let files: string;
  beforeAll(() => {
    dataDir = tempDataDir();
    files = mkdtempSync(join(tmpdir(), 'teaminfra-apps-'));
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  });

  const file = (name: string, text: string) => {
    const path = join(files, name);
    writeFileSync(path, text);
    return path;
  };

  it('list-apps lists the bundled demo and tryton on a fresh data directory', async () => {
    const { apps } = await admin(dataDir, ['list-apps']);
    expect(apps.map((app: { name: string; origin: string }) => `${app.name}:${app.origin}`)).toEqual(['demo:bundled', 'tryton:bundled']);
    expect(apps[1].services).toEqual([{ name: 'database', image: 'teaminfra-tryton-postgres:15' }, { name: 'tryton', image: 'teaminfra-tryton:6.0' }]);
  });

  it('add-app stores a definition under --name and list-apps shows it', async () => {
    const path = file('shop.yml', 'services:\n  web: { image: "shop:1", ports: ["8000"] }\nx-teaminfra: { web: web }\n');
    expect(await admin(dataDir, ['add-app', '--file', path, '--name', 'shop'])).toMatchObject({
      name: 'shop', origin: 'added', web: { service: 'web', port: 8000 }, services: [{ name: 'web', image: 'shop:1' }],
    });
    const { apps } = await admin(dataDir, ['list-apps']);
    expect(apps.map((app: { name: string }) => app.name)).toEqual(['demo', 'tryton', 'shop']);
  });

  it('add-app prints when the app was added, the time list-apps gives, kept by a --replace', async () => {
    const path = file('books.yml', 'name: books\nservices:\n  web: { image: "books:1", ports: ["5762"] }\nx-teaminfra: { web: web }\n');
    const before = Date.now();
    const added = await admin(dataDir, ['add-app', '--file', path]);
    expect(Date.parse(added.added_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(added.added_at)).toBeLessThanOrEqual(Date.now());
    const listed = (await admin(dataDir, ['list-apps'])).apps.find((app: { name: string }) => app.name === 'books');
    expect(listed.added_at).toBe(added.added_at);
    writeFileSync(path, 'name: books\nservices:\n  web: { image: "books:2", ports: ["5762"] }\nx-teaminfra: { web: web }\n');
    expect(await admin(dataDir, ['add-app', '--file', path, '--replace'])).toMatchObject({
      added_at: added.added_at, services: [{ name: 'web', image: 'books:2' }],
    });
  });

  it('add-app names the key a typo was meant to be', async () => {
    const path = file('typo.yml', 'name: typo\nservices:\n  web: { image: "x:1", ports: ["80"], healtcheck: { test: [CMD, "true"] } }\nx-teaminfra: { web: web }\n');
    const result = await runCli(['admin', 'add-app', '--file', path, '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`add-app: ${path} is refused. Service "web" uses the key "healtcheck", which teaminfra does not know; did you mean "healthcheck"?`);
  });

  it('add-app refuses a privileged service and a host bind mount, exits 2, and stores nothing', async () => {
    const path = file('bad.yml', 'name: bad\nservices:\n  web:\n    image: x\n    privileged: true\n    volumes: ["/:/host"]\n    ports: ["80"]\nx-teaminfra: { web: web }\n');
    const result = await runCli(['admin', 'add-app', '--file', path, '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`add-app: ${path} is refused. Service "web" sets "privileged": refused, because privileged mode gives the container the whole machine.`);
    expect(result.stderr).toContain('Service "web" mounts the host path "/" (a bind mount): refused');
    const { apps } = await admin(dataDir, ['list-apps']);
    expect(apps.map((app: { name: string }) => app.name)).not.toContain('bad');
  });

  it('add-app says so when the file cannot be read or --file is missing', async () => {
    const missing = await runCli(['admin', 'add-app', '--file', join(files, 'none.yml'), '--data-dir', dataDir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`add-app: cannot read ${join(files, 'none.yml')} (ENOENT).`);
    const noFile = await runCli(['admin', 'add-app', '--data-dir', dataDir]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('add-app: --file is required.');
  });

  it('build-app-images refuses an app that does not exist before reaching any engine', async () => {
    const result = await runCli(['admin', 'build-app-images', '--app', 'nothing', '--docker-host', 'unix:///nonexistent.sock', '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('build-app-images: no app named "nothing"; "teaminfra admin list-apps" lists them.');
  });
});
