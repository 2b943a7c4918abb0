// What an access token issued by the OAuth server looks like: oidc-provider's opaque format, 256
// random bits as 43 base64url characters (provider-config.ts sets this same size). authenticate()
// refuses a bearer that is neither this nor a `tinf_` value before any lookup.
export const ACCESS_TOKEN_BITS = 256;

const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function isOAuthAccessTokenShape(value: string): boolean {
  return SHAPE.test(value);
}
