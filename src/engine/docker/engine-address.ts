// Where a Docker engine answers, as the Docker CLI names it (DOCKER_HOST): a local socket,
// TCP (TLS with certificate files on port 2376, plain on 2375), or SSH to a host whose engine
// listens on its own socket. Parsed once, refused with a sentence the operator can act on.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export type EngineAddress =
  | { kind: 'unix'; socketPath: string; text: string }
  | { kind: 'tcp'; host: string; port: number; tls: TlsFiles | null; text: string }
  | { kind: 'ssh'; user: string | null; host: string; port: number | null; socketPath: string; text: string };

export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

export class EngineAddressError extends Error {}

const USAGE = 'Use unix:///var/run/docker.sock, tcp://HOST:2376 (TLS, with ca.pem, cert.pem and key.pem in ' +
  'DOCKER_CERT_PATH or ~/.docker) or ssh://USER@HOST.';

/**
 * `tlsDir`: where ca.pem, cert.pem and key.pem are for tcp://...:2376 (the CLI's DOCKER_CERT_PATH);
 * the files are checked here so that a missing one is named at once, not at the first call.
 */
export function parseEngineAddress(text: string, tlsDir: string | undefined = defaultTlsDir()): EngineAddress {
  const trimmed = text.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new EngineAddressError(`"${text}" is not a Docker engine address. ${USAGE}`);
  }
  if (url.protocol === 'unix:') {
    const socketPath = decodeURIComponent(url.pathname);
    if (!socketPath.startsWith('/') || url.host !== '') throw new EngineAddressError(`"${text}" must name an absolute socket path. ${USAGE}`);
    return { kind: 'unix', socketPath, text: `unix://${socketPath}` };
  }
  if (url.protocol === 'tcp:') {
    if (!url.hostname) throw new EngineAddressError(`"${text}" names no host. ${USAGE}`);
    const port = url.port ? Number(url.port) : 2376;
    if (url.pathname !== '' && url.pathname !== '/') throw new EngineAddressError(`"${text}": a tcp address has no path. ${USAGE}`);
    // Docker's convention: 2375 is plain HTTP (only ever on a trusted network), anything else TLS.
    const tls = port === 2375 ? null : tlsFilesIn(tlsDir, text);
    return { kind: 'tcp', host: url.hostname, port, tls, text: `tcp://${url.host}` };
  }
  if (url.protocol === 'ssh:') {
    if (!url.hostname) throw new EngineAddressError(`"${text}" names no host. ${USAGE}`);
    const socketPath = url.pathname && url.pathname !== '/' ? decodeURIComponent(url.pathname) : '/var/run/docker.sock';
    return {
      kind: 'ssh', user: url.username ? decodeURIComponent(url.username) : null, host: url.hostname,
      port: url.port ? Number(url.port) : null, socketPath, text: trimmed,
    };
  }
  throw new EngineAddressError(`"${text}" is not a Docker engine address (scheme ${url.protocol.replace(/:$/, '')}). ${USAGE}`);
}

/** The host name a service's published port is reached at: the engine's own machine. */
export function publishedHost(address: EngineAddress): string {
  return address.kind === 'unix' ? '127.0.0.1' : address.host;
}

function tlsFilesIn(dir: string | undefined, text: string): TlsFiles {
  if (!dir) throw new EngineAddressError(`"${text}" needs TLS certificates: set DOCKER_CERT_PATH to the folder with ca.pem, cert.pem and key.pem.`);
  const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  const missing = Object.values(files).filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new EngineAddressError(`"${text}" needs TLS certificates, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing. ` +
      'Set DOCKER_CERT_PATH to the folder with ca.pem, cert.pem and key.pem (or use tcp://HOST:2375 on a trusted network).');
  }
  return files;
}

function defaultTlsDir(): string | undefined {
  if (process.env.DOCKER_CERT_PATH) return process.env.DOCKER_CERT_PATH;
  return process.env.HOME ? join(process.env.HOME, '.docker') : undefined;
}
