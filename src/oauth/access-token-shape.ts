// What an access token issued by the OAuth server looked like before its tokens took the `tinf_`
// format (token-values.ts): oidc-provider's opaque format, 256 random bits as 43 base64url
// characters. Values issued then stay valid until their sign-in refreshes them (which gives a
// `tinf_` value) or they are revoked, so authenticate() still accepts this shape besides `tinf_`
// and refuses anything else before any lookup. provider-config.ts keeps the same size for the
// library's other opaque values (authorization and device codes).
export const ACCESS_TOKEN_BITS = 256;

const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function isOAuthAccessTokenShape(value: string): boolean {
  return SHAPE.test(value);
}
