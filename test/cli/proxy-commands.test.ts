// `teaminfra admin set-server-domain` and `set-server-proxy` as an operator runs them: the base
// domain checked and kept in its ASCII form, the services' platform names moved under a new one
// with their slugs kept, the proxy's ports checked; each refusal exits 2 with a sentence.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { nowIso } from '../../src/db/ids.js';
import { ensurePlatformDomain } from '../../src/engine/domains/platform-name.js';
import { runCli, seedThroughCli, type CliSeeded } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { makeTestCertificates } from '../support/test-ca.js';
import { isSealed } from '../../src/secrets/secret-box.js';

describe('teaminfra admin set-server-domain and set-server-proxy', () => {
  let dataDir: string;
  let local: CliSeeded;
  let docker: CliSeeded;

  beforeAll(async () => {
    dataDir = tempDataDir();
    local = await seedThroughCli(dataDir, { team: 'Local team', service: 'Local' });
    docker = await seedThroughCli(dataDir, { team: 'Docker team', service: 'Café Shop', server: 'docker' });
    const db = openDatabase(dataDir);
    try {
      await db.kysely.insertInto('docker_servers').values({ server_id: docker.serverId, docker_host: 'unix:///var/run/docker.sock', image: null, created_at: nowIso() }).execute();
    } finally {
      await db.close();
    }
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const run = (command: string, args: string[]) => runCli(['admin', command, ...args, '--data-dir', dataDir]);
  const platformNameOf = async (serviceId: string) => {
    const db = openDatabase(dataDir);
    try {
      const service = await db.kysely.selectFrom('erp_services').select(['id', 'name', 'server_id']).where('id', '=', serviceId).executeTakeFirstOrThrow();
      return await ensurePlatformDomain(db.kysely, service);
    } finally {
      await db.close();
    }
  };

  it('gives the server a base domain, and its services platform names that keep their slug when it changes', async () => {
    expect(await platformNameOf(docker.serviceId)).toBeNull();
    const set = await run('set-server-domain', ['--server', docker.serverId, '--domain', 'Apps.Example.COM.']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      id: docker.serverId, domain: 'apps.example.com',
      note: 'Point apps.example.com and *.apps.example.com at the server. Each service answers at https://<its name>.apps.example.com from its next start or redeploy (a redeploy moves it with nothing dropped).',
    });
    expect(await platformNameOf(docker.serviceId)).toBe('cafe-shop.apps.example.com');
    expect((await run('set-server-domain', ['--server', docker.serverId, '--domain', 'hosting.example.net'])).code).toBe(0);
    expect(await platformNameOf(docker.serviceId)).toBe('cafe-shop.hosting.example.net');
  });

  it('refuses a server that is not a Docker server, a wildcard and a bad name', async () => {
    const local_ = await run('set-server-domain', ['--server', local.serverId, '--domain', 'apps.example.com']);
    expect(local_.code).toBe(2);
    expect(local_.stderr).toContain(`server ${local.serverId} is not a Docker server`);
    const wildcard = await run('set-server-domain', ['--server', docker.serverId, '--domain', '*.example.com']);
    expect(wildcard.code).toBe(2);
    expect(wildcard.stderr).toContain('is a wildcard');
    expect((await run('set-server-domain', ['--server', docker.serverId, '--domain', 'a..example.com'])).code).toBe(2);
  });

  it('sets the proxy\'s ports, keeps the one not given, and refuses a bad or equal port', async () => {
    const set = await run('set-server-proxy', ['--server', docker.serverId, '--https-port', '8443']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ id: docker.serverId, http_port: 80, https_port: 8443 });
    expect(JSON.parse((await run('set-server-proxy', ['--server', docker.serverId, '--http-port', '8080'])).stdout))
      .toEqual({ id: docker.serverId, http_port: 8080, https_port: 8443 });
    const bad = await run('set-server-proxy', ['--server', docker.serverId, '--http-port', '70000']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--http-port must be a port from 1 to 65535; got "70000"');
    expect((await run('set-server-proxy', ['--server', docker.serverId, '--http-port', '8443'])).stderr).toContain('must differ');
  });

  it('keeps an operator certificate with its key sealed, refuses a key of another, and removes it', async () => {
    const certificates = makeTestCertificates(['DNS:*.apps.example.com']);
    const certificateFile = join(dataDir, 'cert.pem');
    const keyFile = join(dataDir, 'key.pem');
    writeFileSync(certificateFile, certificates.serverCertPem);
    writeFileSync(keyFile, makeTestCertificates().serverKeyPem);
    const wrong = await run('set-server-certificate', ['--server', docker.serverId, '--certificate-file', certificateFile, '--key-file', keyFile]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('the key does not belong to the certificate.');
    writeFileSync(keyFile, certificates.serverKeyPem);
    const set = await run('set-server-certificate', ['--server', docker.serverId, '--certificate-file', certificateFile, '--key-file', keyFile]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).certificate.names).toEqual(['localhost', '*.apps.example.com']);
    expect(set.stdout).not.toContain('PRIVATE KEY');
    const db = openDatabase(dataDir);
    try {
      const row = await db.kysely.selectFrom('docker_servers').select('tls_key').where('server_id', '=', docker.serverId).executeTakeFirstOrThrow();
      expect(isSealed(row.tls_key!)).toBe(true);
    } finally {
      await db.close();
    }
    expect(JSON.parse((await run('set-server-certificate', ['--server', docker.serverId, '--remove'])).stdout)).toEqual({ id: docker.serverId, certificate: null });
  });
});
