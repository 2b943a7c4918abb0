// What the proxy knows about each name's certificate, read back by polling, not by events:
// Debian's Caddy 2.6 has an `events` app but no module that would hand an event to anyone
// (exec and webhook handlers are plugins it is not built with), and its admin API lists no
// certificates. So two reads, both through the engine's API:
// - its certificate storage (the archive endpoint): a name with a certificate there is issued,
//   until the certificate's own expiry (read from the certificate, not from Caddy's word);
// - its log since the last look (the logs endpoint): Caddy's "could not get certificate from
//   issuer" lines carry the CA's verdict for a name; a later "obtained"/"renewed" line clears it.
import { X509Certificate } from 'node:crypto';
import { extract as tarExtract } from 'tar-stream';
import type { Readable } from 'node:stream';
import { demultiplex } from '../containers.js';
import { DockerError, type DockerApi } from '../docker-api.js';
import { CERTIFICATE_STORAGE } from './caddy-config.js';

export interface StoredCertificate {
  name: string;
  expiresAt: string;
  serialNumber: string;
}

export interface CertificateVerdict {
  name: string;
  /** When Caddy said it (ms since the epoch). */
  at: number;
  ok: boolean;
  /** The CA's or Caddy's own words for a failure; null for a success. */
  error: string | null;
  /** A renewal (of a certificate still served), rather than a first certificate. */
  renewal: boolean;
}

/** The newest certificate of each name in the proxy's storage (any issuer). */
export async function readStoredCertificates(api: DockerApi, container: string): Promise<Map<string, StoredCertificate>> {
  const found = new Map<string, StoredCertificate>();
  const path = `${CERTIFICATE_STORAGE}/certificates`;
  let archive: Readable;
  try {
    archive = await api.stream('GET', `/containers/${container}/archive`, { query: { path } });
  } catch (error) {
    // No certificate yet: Caddy makes the directory with the first one.
    if (error instanceof DockerError && error.status === 404) return found;
    throw error;
  }
  const reader = tarExtract();
  reader.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
    stream.on('end', () => {
      if (header.type === 'file' && header.name.endsWith('.crt')) {
        try {
          // The file holds the chain, the name's own certificate first.
          const certificate = new X509Certificate(Buffer.concat(chunks));
          const name = header.name.split('/').at(-2) ?? '';
          const expiresAt = new Date(certificate.validTo).toISOString();
          const current = found.get(name);
          if (!current || current.expiresAt < expiresAt) found.set(name, { name, expiresAt, serialNumber: certificate.serialNumber });
        } catch {
          // A file being written as we read: the next look sees it whole.
        }
      }
      next();
    });
    stream.resume();
  });
  await new Promise<void>((resolve, reject) => {
    reader.on('finish', resolve);
    reader.on('error', reject);
    archive.on('error', reject);
    archive.pipe(reader);
  });
  return found;
}

/** Caddy's verdicts on certificates since `sinceMs`, oldest first. */
export async function readCertificateVerdicts(api: DockerApi, container: string, sinceMs: number): Promise<CertificateVerdict[]> {
  const log = await api.stream('GET', `/containers/${container}/logs`, {
    query: { stdout: 1, stderr: 1, since: Math.floor(sinceMs / 1000) },
  });
  const chunks: Buffer[] = [];
  for await (const chunk of log) chunks.push(chunk as Buffer);
  return verdictsOf(demultiplex(Buffer.concat(chunks)), sinceMs);
}

/** The verdicts in Caddy's JSON log lines (exported for its unit test). */
export function verdictsOf(text: string, sinceMs = 0): CertificateVerdict[] {
  const verdicts: CertificateVerdict[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"tls.obtain"') && !line.includes('"tls.renew"')) continue;
    let entry: { ts?: number; logger?: string; msg?: string; identifier?: string; error?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    const at = Math.round((entry.ts ?? 0) * 1000);
    if (!entry.identifier || at < sinceMs) continue;
    const renewal = entry.logger === 'tls.renew';
    if (entry.msg === 'certificate obtained successfully' || entry.msg === 'certificate renewed successfully') {
      verdicts.push({ name: entry.identifier, at, ok: true, error: null, renewal });
    } else if (entry.msg === 'could not get certificate from issuer') {
      verdicts.push({ name: entry.identifier, at, ok: false, error: entry.error ?? 'no reason given', renewal });
    }
  }
  return verdicts;
}
