// The access and refresh tokens the OAuth server issues have the format of every other team
// token (`tinf_` + base62 + CRC32 checksum, src/auth/token-format.ts), so that secret scanners
// which know that format find a leaked assistant or command-line token too, and authenticate()
// refuses a mistyped one without a lookup.
// oidc-provider (8 and 9) has no setting for a token's value, only for its length
// (`formats.bitsOfOpaqueRandomness`): a token's value is its `jti`, which the model's
// generateTokenId() makes when the token is first saved. Each Provider builds its own model
// classes, so replacing that method on this provider's AccessToken and RefreshToken changes
// nothing elsewhere. The library's own method still runs first: for access tokens it records the
// format it chose (opaque), which saving the token needs.
import type { Provider } from 'oidc-provider';
import { generateTokenValue } from '../auth/token-format.js';

interface TokenModel {
  prototype: { generateTokenId(this: unknown, ...args: unknown[]): string };
}

export function issueTeamTokenValues(provider: Provider): void {
  for (const model of [provider.AccessToken, provider.RefreshToken] as unknown as TokenModel[]) {
    const libraryGenerate = model.prototype.generateTokenId;
    if (typeof libraryGenerate !== 'function') throw new Error('oidc-provider no longer makes token values with generateTokenId().');
    model.prototype.generateTokenId = function generateTeamTokenValue(...args: unknown[]): string {
      libraryGenerate.apply(this, args);
      return generateTokenValue();
    };
  }
}
