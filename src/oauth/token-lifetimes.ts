// Access tokens and grants have no lifetime of their own (provider-config.ts): an access token is a
// team token, which works until it is revoked, its "Expires on" passes or a refresh replaces it,
// and a grant lives as long as its token (team-tokens.ts). So the library stores them without an
// expiry and its token response carries no expires_in.
// oidc-provider 9 has no setting for that: every `ttl` it reads must be a positive number (8 took
// a helper answering undefined). Its models ask their static expiresIn() for the lifetime, so this
// provider's AccessToken and Grant classes answer undefined there, as 8 did; each Provider builds
// its own model classes, so nothing else changes.
import type { Provider } from 'oidc-provider';

interface ExpiringModel { expiresIn?: (...args: unknown[]) => number | undefined }

export function storeWithoutLifetime(provider: Provider): void {
  for (const model of [provider.AccessToken, provider.Grant] as unknown as ExpiringModel[]) {
    if (typeof model.expiresIn !== 'function') throw new Error('oidc-provider no longer asks its models for a lifetime with expiresIn().');
    model.expiresIn = () => undefined;
  }
}
