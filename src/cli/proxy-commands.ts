// The operator's proxy commands (`teaminfra admin ...`): build the proxy image (Debian's Caddy,
// offline) on an engine, give a Docker server the base domain its services' platform names are
// made under, choose the ports its proxy is published on, and give it a certificate and key
// instead of ACME's (the key sealed at rest). The proxy itself is started, and
// configured from the database, by the Docker driver.
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../secrets/secret-box.js';
import { CertificateFileError, readServerCertificate, setServerCertificate } from '../engine/domains/proxy-secrets.js';
import type { Database } from '../db/tables.js';
import { ProgramError } from '../engine/apps/images/run-program.js';
import { DockerApi, DockerError } from '../engine/docker/docker-api.js';
import { parseEngineAddress } from '../engine/docker/engine-address.js';
import { ensureProxyImage } from '../engine/docker/proxy/proxy-image.js';
import { defaultDockerHost, engineAddressOption } from './docker-commands.js';
import { parseOptions, required } from './options.js';
import { checkDomainName, DomainNameError } from '../engine/domains/domain-name.js';
import { moveServerPlatformNames } from '../engine/domains/platform-name.js';
import { UsageError } from './usage.js';

export const PROXY_COMMANDS = {
  'build-proxy-image': async (_db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { 'docker-host': { type: 'string' } }, 'build-proxy-image');
    const api = new DockerApi(parseEngineAddress(engineAddressOption(values['docker-host'] ?? defaultDockerHost(), 'build-proxy-image')));
    try {
      await api.ping();
      const { image, contentImage, built } = await ensureProxyImage(api, (line) => process.stderr.write(`build-proxy-image: ${line}\n`));
      return { image, content_image: contentImage, built };
    } catch (error) {
      if (error instanceof DockerError) throw new UsageError(`build-proxy-image: ${error.reason}`);
      if (error instanceof ProgramError) throw new UsageError(`build-proxy-image: ${error.message}`);
      throw error;
    } finally {
      await api.close();
    }
  },
  'set-server-domain': async (db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { server: { type: 'string' }, domain: { type: 'string' } }, 'set-server-domain');
    const serverId = await dockerServer(db, required(values, 'server', 'set-server-domain'), 'set-server-domain');
    let domain: string;
    try {
      domain = checkDomainName(required(values, 'domain', 'set-server-domain'), { allowLocal: true });
    } catch (error) {
      if (error instanceof DomainNameError) throw new UsageError(`set-server-domain: --domain ${error.message}`);
      throw error;
    }
    const taken = await db.selectFrom('docker_servers').select('server_id').where('base_domain', '=', domain).where('server_id', '!=', serverId).executeTakeFirst();
    if (taken) throw new UsageError(`set-server-domain: ${domain} is already the base domain of server ${taken.server_id}.`);
    await db.updateTable('docker_servers').set({ base_domain: domain }).where('server_id', '=', serverId).execute();
    await moveServerPlatformNames(db, serverId, domain);
    return {
      id: serverId, domain,
      note: `Point ${domain} and *.${domain} at the server. Each service answers at https://<its name>.${domain} from its next start or redeploy (a redeploy moves it with nothing dropped).`,
    };
  },
  'set-server-proxy': async (db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, { server: { type: 'string' }, 'http-port': { type: 'string' }, 'https-port': { type: 'string' } }, 'set-server-proxy');
    const serverId = await dockerServer(db, required(values, 'server', 'set-server-proxy'), 'set-server-proxy');
    if (values['http-port'] === undefined && values['https-port'] === undefined) throw new UsageError('set-server-proxy: give --http-port, --https-port or both.');
    const row = await db.selectFrom('docker_servers').select(['proxy_http_port', 'proxy_https_port']).where('server_id', '=', serverId).executeTakeFirstOrThrow();
    const httpPort = values['http-port'] === undefined ? row.proxy_http_port : portOf(values['http-port'], '--http-port');
    const httpsPort = values['https-port'] === undefined ? row.proxy_https_port : portOf(values['https-port'], '--https-port');
    if ((httpPort ?? 80) === (httpsPort ?? 443)) throw new UsageError('set-server-proxy: --http-port and --https-port must differ.');
    await db.updateTable('docker_servers').set({ proxy_http_port: httpPort, proxy_https_port: httpsPort }).where('server_id', '=', serverId).execute();
    return { id: serverId, http_port: httpPort ?? 80, https_port: httpsPort ?? 443 };
  },
  'set-server-certificate': setCertificate,
};

/** `set-server-certificate --server ID --certificate-file F --key-file F | --remove`: a certificate instead of ACME's for the names it covers. */
async function setCertificate(db: Kysely<Database>, args: string[], _stdin: () => Promise<string>, secrets: () => Promise<SecretBox>): Promise<object> {
  const command = 'set-server-certificate';
  const values = parseOptions(args, { server: { type: 'string' }, 'certificate-file': { type: 'string' }, 'key-file': { type: 'string' }, remove: { type: 'boolean' } }, command);
  const serverId = await dockerServer(db, required(values, 'server', command), command);
  if (values.remove) {
    await setServerCertificate(db, await secrets(), serverId, null);
    return { id: serverId, certificate: null };
  }
  const read = (option: 'certificate-file' | 'key-file') => {
    const file = required(values, option, command);
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`${command}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
    }
  };
  let certificate;
  try {
    certificate = readServerCertificate(read('certificate-file'), read('key-file'));
  } catch (error) {
    if (error instanceof CertificateFileError) throw new UsageError(`${command}: ${error.message}`);
    throw error;
  }
  await setServerCertificate(db, await secrets(), serverId, certificate);
  return { id: serverId, certificate: { names: certificate.hostnames, expires_at: certificate.expiresAt } };
}

async function dockerServer(db: Kysely<Database>, serverId: string, command: string): Promise<string> {
  const row = await db.selectFrom('docker_servers').select('server_id').where('server_id', '=', serverId).executeTakeFirst();
  if (!row) throw new UsageError(`${command}: server ${serverId} is not a Docker server.`);
  return row.server_id;
}

function portOf(text: string, option: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) throw new UsageError(`set-server-proxy: ${option} must be a port from 1 to 65535; got "${text}".`);
  return port;
}
