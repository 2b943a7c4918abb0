// An ERP whose logins are PostgreSQL roles and whose company database is its own (as LedgerSMB's
// are), on a real engine, with the example definition of docs/app-definitions.md: its snapshot
// dumps the roles beside the company database, and its restore applies them, but the image's
// superuser, to the fresh cluster a restore or copy starts from, before the data. A restore after
// a change brings back the roles, their passwords, the owners and the grants; a copy has them too,
// while its superuser keeps the copy's own password. The same app backed up as Tryton's definition
// does (pg_dump of one database) fails its restore with a sentence and changes nothing.
// The example's ERP image is not one we have: its web service is the bundled ERP image here
// (given the contract's variables through its environment, since an app's container has only
// what its environment names), and its migrate (the ERP's own setup) is left out; the database
// service, the snapshot, verify and restore commands and the first login are the page's, word
// for word. The company's roles and data are made with psql, as the ERP would make them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as yamlText } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApp } from '../../../src/engine/apps/app-registry.js';
import { readServiceSecrets } from '../../../src/engine/docker/service-secrets.js';
import { listAppContainers } from '../../../src/engine/docker/app-containers.js';
import { packageRoot } from '../../../src/package-root.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam, type DockerTeam } from './support/docker-team.js';
import { teamCalls } from './support/team-calls.js';

const OPERATION_MS = 5 * 60_000;

/** The page's example definition (the YAML block that starts `name: ledger`), run with the bundled ERP image as its web service. */
function exampleDefinition(webImage: string, snapshotOf?: 'tryton'): string {
  const page = readFileSync(join(packageRoot, 'docs', 'app-definitions.md'), 'utf8');
  const block = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.startsWith('name: ledger\n'));
  if (!block) throw new Error('docs/app-definitions.md has no example definition starting "name: ledger"');
  const file = parseYaml(block);
  // The bundled ERP reads the image contract's variables, which an app's container has only when its environment names them.
  const contract = ['SERVICE_ID', 'SERVICE_NAME', 'REVISION', 'PUBLIC_URL', 'SMTP_HOST', 'SMTP_PORT', 'SMTP_USER', 'SMTP_PASSWORD'].map((name) => `TEAMINFRA_${name}`);
  file.services.ledger = {
    image: webImage, environment: Object.fromEntries(contract.map((name) => [name, `\${${name}}`])), volumes: ['files:/data'],
    depends_on: file.services.ledger.depends_on, ports: ['8080'],
  };
  file.volumes.files = {};
  file['x-teaminfra']['health-path'] = '/health';
  delete file['x-teaminfra'].commands.migrate;
  if (snapshotOf === 'tryton') {
    file.name = 'ledger-as-tryton';
    file['x-teaminfra'].commands = {
      snapshot: { service: 'database', command: ['pg_dump', '--format=custom', '--file=books.dump', 'books'] },
      restore: { service: 'database', command: ['pg_restore', '--clean', '--if-exists', '--no-owner', '--single-transaction', '--dbname=books', 'books.dump'] },
    };
  }
  return yamlText(file);
}

describe.runIf(dockerAvailable)('an app whose logins are PostgreSQL roles, defined as docs/app-definitions.md says', () => {
  const api = testDockerApi();
  let docker: DockerTeam;
  let serverId: string;
  let serviceId: string;
  let backupId: string;
  const { call, actAndWait } = teamCalls(() => docker.server.baseUrl, () => docker.token);

  /** psql in the service's running database container, over TCP: as its PGUSER with its PGPASSWORD (the superuser) unless told otherwise. */
  const psql = async (service: string, sql: string, as: { user?: string; password?: string; database?: string } = {}) => {
    const database = (await listAppContainers(api, service)).find((each) => each.appService === 'database' && each.running);
    if (!database) throw new Error(`no running database container for ${service}`);
    const env = Object.entries({ PGHOST: '127.0.0.1', PGUSER: as.user, PGPASSWORD: as.password, PGDATABASE: as.database })
      .flatMap(([name, value]) => (value === undefined ? [] : ['-e', `${name}=${value}`]));
    return execFileSync('docker', ['exec', ...env, database.id, 'psql', '--set=ON_ERROR_STOP=1', '-Atc', sql], {
      encoding: 'utf8', env: { ...process.env, DOCKER_HOST: TEST_DOCKER_HOST }, timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  };
  const asClerk = (password = 'clerk-pw') => ({ user: 'clerk', password, database: 'books' });
  /** What the login role reads of the company when it logs in with its password. */
  const clerkReads = (service: string, password?: string) =>
    psql(service, "SELECT current_user || ': ' || string_agg(memo, ', ' ORDER BY id) FROM entries", asClerk(password));
  /** Who owns the company's database and table, and whether the group role may read it. */
  const ownership = async (service: string) => JSON.parse(await psql(service, "SELECT json_build_object('database', " +
    "(SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'books'), 'table', (SELECT tableowner FROM pg_tables WHERE tablename = 'entries'), " +
    "'readers', has_table_privilege('books_readers', 'entries', 'SELECT'))", { database: 'books' }));
  /** The company as the ERP makes it: a login role owning its database, a group role granted to read it. */
  const makeCompany = async (service: string) => {
    await psql(service, "CREATE ROLE clerk LOGIN PASSWORD 'clerk-pw'; CREATE ROLE books_readers NOLOGIN; GRANT books_readers TO clerk;");
    await psql(service, 'CREATE DATABASE books OWNER clerk');
    await psql(service, "CREATE TABLE entries (id int PRIMARY KEY, memo text); INSERT INTO entries VALUES (1, 'opening balance'); " +
      'GRANT SELECT ON entries TO books_readers;', asClerk());
  };

  beforeAll(async () => {
    docker = await startDockerTeam({ mail: { host: '0.0.0.0', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 } });
    await docker.server.app.mailCatcher.start();
    serverId = await docker.addServer('docker-roles');
    const image = (await api.json<object | undefined>('GET', '/images/teaminfra-tryton-postgres:15/json', { accept: [404] }));
    if (!image) throw new Error('teaminfra-tryton-postgres:15 is not on the test engine: teaminfra admin build-app-images --app tryton builds it');
    await addApp(docker.server.app.db.kysely, exampleDefinition(docker.image), { replace: false });
    await addApp(docker.server.app.db.kysely, exampleDefinition(docker.image, 'tryton'), { replace: false });
    const created = await actAndWait('POST', '/api/service-erp', OPERATION_MS, { server_id: serverId, name: 'Books', app: 'ledger' });
    expect(created, JSON.stringify(created)).toMatchObject({ state: 'succeeded', result: { initial_credentials: { login: 'admin', fields: { company: 'books' } } } });
    serviceId = created.service_id;
    const started = await actAndWait('POST', `/api/service-erp/${serviceId}/start`, OPERATION_MS);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    await makeCompany(serviceId);
  }, 3 * OPERATION_MS);

  afterAll(async () => {
    await docker?.server.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  it('restores the roles, their passwords, owners and grants and the data into the fresh cluster, after a change', async () => {
    const backup = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, OPERATION_MS);
    expect(backup, JSON.stringify(backup)).toMatchObject({ state: 'succeeded' });
    backupId = backup.backup_id;
    const before = { reads: await clerkReads(serviceId), ownership: await ownership(serviceId) };
    expect(before).toEqual({ reads: 'clerk: opening balance', ownership: { database: 'clerk', table: 'clerk', readers: true } });

    await psql(serviceId, "INSERT INTO entries VALUES (2, 'after the backup'); REVOKE SELECT ON entries FROM books_readers;", asClerk());
    await psql(serviceId, "ALTER ROLE clerk PASSWORD 'changed-pw'");
    expect(await clerkReads(serviceId, 'changed-pw')).toBe('clerk: opening balance, after the backup');

    const restored = await actAndWait('POST', `/api/backups/${backupId}/restore`, OPERATION_MS, {});
    expect(restored, JSON.stringify(restored)).toMatchObject({ state: 'succeeded' });
    expect({ reads: await clerkReads(serviceId), ownership: await ownership(serviceId) }).toEqual(before);
    // The superuser is the one the image made, with the service's own password (the container's PGPASSWORD).
    expect(await psql(serviceId, 'SELECT current_user')).toBe('ledger');
  }, 3 * OPERATION_MS);

  it('copies the company with its roles, the copy\'s superuser keeping the copy\'s own password', async () => {
    const copied = await actAndWait('POST', `/api/service-erp/${serviceId}/copies`, OPERATION_MS, { name: 'Books staging' });
    expect(copied, JSON.stringify(copied)).toMatchObject({ state: 'succeeded' });
    const copyId = copied.service_id as string;
    const started = await actAndWait('POST', `/api/service-erp/${copyId}/start`, OPERATION_MS);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    expect(await clerkReads(copyId)).toBe('clerk: opening balance');
    expect(await ownership(copyId)).toEqual({ database: 'clerk', table: 'clerk', readers: true });
    const [parent, copy] = await Promise.all([serviceId, copyId].map((id) => readServiceSecrets(docker.server.app.db.kysely, docker.server.app.secrets, id)));
    expect(copy!.DB_PASSWORD).not.toBe(parent!.DB_PASSWORD);
    expect(await psql(copyId, 'SELECT current_user')).toBe('ledger');
  }, 3 * OPERATION_MS);

  it('fails the restore of the same app backed up as Tryton\'s definition does, with a sentence, and changes nothing', async () => {
    const created = await actAndWait('POST', '/api/service-erp', OPERATION_MS, { server_id: serverId, name: 'Books as Tryton', app: 'ledger-as-tryton' });
    const id = created.service_id as string;
    const started = await actAndWait('POST', `/api/service-erp/${id}/start`, OPERATION_MS);
    expect(started, JSON.stringify(started)).toMatchObject({ state: 'succeeded' });
    await makeCompany(id);
    const backup = await actAndWait('POST', `/api/service-erp/${id}/backups`, OPERATION_MS);
    expect(backup, JSON.stringify(backup)).toMatchObject({ state: 'succeeded' });
    const restored = await actAndWait('POST', `/api/backups/${backup.backup_id}/restore`, OPERATION_MS, {});
    expect(restored.state).toBe('failed');
    expect(restored.reason).toMatch(/^The backup could not be restored \(The app's restore command failed \(exit code 1\).*database "books" does not exist.*\), so nothing was changed\.$/s);
    expect((await call('GET', `/api/service-erp/${id}`)).body).toMatchObject({ state: 'running' });
    expect(await clerkReads(id)).toBe('clerk: opening balance');
  }, 4 * OPERATION_MS);
});
