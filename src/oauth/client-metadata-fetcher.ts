// Fetching a client's metadata document (client-metadata-document.ts says what it must be). The
// sign-in server fetches whatever URL a stranger names as client_id, so this is a request made
// on anyone's behalf, and it is bounded like one:
// - through the webhooks' SSRF guard (src/webhooks/url-safety.ts): https only, no private,
//   loopback or link-local address, checked on the URL and again on the address connected to;
// - no redirect is followed (the document must be at its own address, or its client_id would
//   not be that address); a few seconds at most; a few kilobytes at most (5 KB, as the draft
//   recommends), read no further;
// - documents are cached (HTTP max-age, kept between 1 minute and 1 day), at most `cacheEntries`
//   of them, oldest dropped first; a refusal is remembered briefly so that a bad client_id costs
//   one fetch, and concurrent requests for one URL share one fetch.
// Tests serve documents over https on loopback: `allowPrivate` and `trustedCaPem` exist for them
// (and for an operator's own network); TLS verification itself is never turned off.
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { checkOutboundUrl, guardedLookup, UnsafeUrl, type Lookup } from '../webhooks/url-safety.js';
import { ClientMetadataRefusal, clientIdUrlRefusal, clientPropertiesOf, type ClientProperties } from './client-metadata-document.js';

export interface ClientMetadataConfig {
  /** Fetch from private and loopback addresses (TEAMINFRA_CLIENT_METADATA_ALLOW_PRIVATE=1): local development and tests only. */
  allowPrivate: boolean;
  /** A certificate authority trusted besides the system's, PEM (file named by TEAMINFRA_CLIENT_METADATA_CA_FILE). */
  trustedCaPem?: string;
  timeoutMs: number;
  maxBytes: number;
  cacheEntries: number;
}

export const DEFAULT_CLIENT_METADATA_CONFIG: ClientMetadataConfig = { allowPrivate: false, timeoutMs: 5_000, maxBytes: 5 * 1024, cacheEntries: 200 };

const MIN_CACHE_SECONDS = 60;
const MAX_CACHE_SECONDS = 24 * 3600;
const REFUSAL_CACHE_SECONDS = 30;

interface CacheEntry { expiresAt: number; properties?: ClientProperties; refusal?: ClientMetadataRefusal }

export class ClientMetadataFetcher {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<ClientProperties>>();
  private readonly agent: Agent;

  constructor(private readonly config: ClientMetadataConfig, lookup?: Lookup) {
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup(config.allowPrivate, lookup) as never,
        ...(config.trustedCaPem ? { ca: [...rootCertificates, config.trustedCaPem] } : {}),
      },
    });
  }

  /** The client's metadata, or a ClientMetadataRefusal whose message says why not. */
  async find(clientId: string): Promise<ClientProperties> {
    const cached = this.cache.get(clientId);
    if (cached && cached.expiresAt > Date.now()) {
      if (cached.refusal) throw cached.refusal;
      return cached.properties as ClientProperties;
    }
    let pending = this.inFlight.get(clientId);
    if (!pending) {
      pending = this.fetchAndRemember(clientId).finally(() => this.inFlight.delete(clientId));
      this.inFlight.set(clientId, pending);
    }
    return pending;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async fetchAndRemember(clientId: string): Promise<ClientProperties> {
    try {
      const { properties, maxAgeSeconds } = await this.fetch(clientId);
      this.remember(clientId, { properties, expiresAt: Date.now() + maxAgeSeconds * 1000 });
      return properties;
    } catch (error) {
      const refusal = error instanceof ClientMetadataRefusal ? error : new ClientMetadataRefusal(describeFailure(error));
      this.remember(clientId, { refusal, expiresAt: Date.now() + REFUSAL_CACHE_SECONDS * 1000 });
      throw refusal;
    }
  }

  private async fetch(clientId: string): Promise<{ properties: ClientProperties; maxAgeSeconds: number }> {
    const urlRefusal = clientIdUrlRefusal(clientId);
    if (urlRefusal) throw new ClientMetadataRefusal(`the client_id ${urlRefusal}`);
    try {
      checkOutboundUrl(clientId, { allowHttp: false, allowPrivate: this.config.allowPrivate }, 'its address');
    } catch (error) {
      if (error instanceof UnsafeUrl) throw new ClientMetadataRefusal(error.message.replace(/\.$/, ''));
      throw error;
    }
    const { timeoutMs, maxBytes } = this.config;
    const response = await request(clientId, {
      method: 'GET', dispatcher: this.agent, headers: { accept: 'application/json', 'user-agent': 'teaminfra-sign-in/1' },
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
    });
    const { statusCode } = response;
    if (statusCode >= 300 && statusCode < 400) {
      await response.body.dump();
      throw new ClientMetadataRefusal(`its address answered with a redirect (${statusCode}); the document must be served at its own address`);
    }
    if (statusCode !== 200) {
      await response.body.dump();
      throw new ClientMetadataRefusal(`its address answered ${statusCode}, not 200`);
    }
    const text = await readAtMost(response.body, maxBytes);
    return { properties: clientPropertiesOf(clientId, text), maxAgeSeconds: cacheSecondsOf(response.headers['cache-control']) };
  }

  private remember(clientId: string, entry: CacheEntry): void {
    this.cache.delete(clientId);
    while (this.cache.size >= this.config.cacheEntries) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(clientId, entry);
  }
}

async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw new ClientMetadataRefusal(`it is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function cacheSecondsOf(cacheControl: string | string[] | undefined): number {
  const text = Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl ?? '';
  const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(text);
  const seconds = maxAge ? Number(maxAge[1]) : MIN_CACHE_SECONDS;
  return Math.min(MAX_CACHE_SECONDS, Math.max(MIN_CACHE_SECONDS, seconds));
}

/** A sentence for a failed fetch; the guard's refusal keeps its own words. */
function describeFailure(error: unknown): string {
  const failure = error as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = failure.cause?.code ?? failure.code;
  if (code === 'EPRIVATE') return 'its address resolves to a private, loopback or link-local address, which is not allowed';
  if (failure.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'its address did not answer in time';
  return `it could not be fetched (${code ?? failure.message ?? 'unknown error'})`;
}

export function clientMetadataConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ClientMetadataConfig {
  const caFile = env.TEAMINFRA_CLIENT_METADATA_CA_FILE;
  return {
    ...DEFAULT_CLIENT_METADATA_CONFIG,
    allowPrivate: env.TEAMINFRA_CLIENT_METADATA_ALLOW_PRIVATE === '1',
    ...(caFile ? { trustedCaPem: readFileSync(caFile, 'utf8') } : {}),
  };
}
