// One oidc-provider instance per public base URL (its issuer). Normally there is one: the
// configured TEAMINFRA_PUBLIC_URL, or the single name the server is reached by. The request's
// Host is checked against the allowed names before it can name an issuer here, and the cache is
// bounded anyway. Instances share one database, so any node can answer any OAuth request.
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Provider } from 'oidc-provider';
import type { App } from '../app.js';
import { ClientMetadataFetcher } from './client-metadata-fetcher.js';
import { providerConfiguration } from './provider-config.js';
import { applyRedirectUriRules } from './redirect-uris.js';
import { normalizeRequests } from './request-normalization.js';
import { loadServerSecrets, type ServerSecrets } from './server-secrets.js';
import { storeWithoutLifetime } from './token-lifetimes.js';
import { issueTeamTokenValues } from './token-values.js';

const MAX_ISSUERS = 8;

export interface OAuthInstance {
  provider: Provider;
  /** The Node (req, res) handler of the provider's routes. */
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

export type OAuthErrorLog = (message: string, error: unknown) => void;

export class OAuthServer {
  private readonly instances = new Map<string, Promise<OAuthInstance>>();
  private secrets: Promise<ServerSecrets> | undefined;
  /** Shared by every issuer: one cache of clients' metadata documents, one connection pool. */
  private readonly clientMetadata: ClientMetadataFetcher;

  constructor(private readonly app: App, private readonly logError: OAuthErrorLog) {
    this.clientMetadata = new ClientMetadataFetcher(app.config.clientMetadata);
  }

  close(): Promise<void> {
    return this.clientMetadata.close();
  }

  instanceFor(base: string): Promise<OAuthInstance> {
    let instance = this.instances.get(base);
    if (!instance) {
      if (this.instances.size >= MAX_ISSUERS) this.instances.delete(this.instances.keys().next().value as string);
      instance = this.create(base);
      instance.catch(() => this.instances.delete(base));
      this.instances.set(base, instance);
    }
    return instance;
  }

  private async create(base: string): Promise<OAuthInstance> {
    // Shared by every issuer; a failed load is tried again by the next request.
    this.secrets ??= loadServerSecrets(this.app.db.kysely, this.app.secrets).catch((error: unknown) => {
      this.secrets = undefined;
      throw error;
    });
    const provider = new Provider(base, providerConfiguration(this.app.db.kysely, base, await this.secrets, this.clientMetadata));
    issueTeamTokenValues(provider);
    storeWithoutLifetime(provider);
    applyRedirectUriRules(provider);
    normalizeRequests(provider, base);
    provider.on('server_error', (_ctx: unknown, error: unknown) => this.logError('OAuth server error', error));
    // Replaces Koa's own console logging of errors that escape the library's handlers. Since v9 the
    // provider is the Koa application itself; its typings list only the library's own events.
    const application: EventEmitter = provider;
    application.on('error', (error: { expose?: boolean }) => {
      // As Koa's own handler: errors meant for the client (expose) are answered, not logged.
      if (!error.expose) this.logError('OAuth request failed', error);
    });
    const callback = provider.callback();
    return { provider, handle: async (req, res) => { await callback(req, res); } };
  }
}
