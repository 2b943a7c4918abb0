// The ACME account a server's proxy asks for certificates with, registered by teaminfra itself.
// Caddy 2.6 registers an account on its first certificate; two names obtained at once on a new
// proxy may each register one, and the key it keeps may then not match the account it keeps,
// after which every order fails ("JWS verification error"). So teaminfra makes the key, keeps it
// (sealed, per server), registers it with the directory (a second registration of a key answers
// the same account), and gives it to Caddy as `account_key`. The account also survives the loss
// of the proxy's volume.
import { createPrivateKey, generateKeyPairSync, sign, type JsonWebKey } from 'node:crypto';
import { Agent, request } from 'undici';

export interface AcmeDirectory {
  directoryUrl: string;
  email: string | null;
  /** A CA root to trust for the directory (TEAMINFRA_ACME_CA_ROOT), or null for the system's. */
  caRootPem: string | null;
}

export class AcmeAccountError extends Error {}

const TIMEOUT_MS = 30_000;

/** A new account key: EC P-256 in PEM (SEC 1), the form Caddy's account_key takes. */
export function newAccountKeyPem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'sec1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
}

/** Registers the key with the directory (agreeing to its terms), or finds the account it already has; answers the account's URL. */
export async function registerAcmeAccount(directory: AcmeDirectory, keyPem: string): Promise<string> {
  const dispatcher = directory.caRootPem ? new Agent({ connect: { ca: directory.caRootPem } }) : undefined;
  const call = async (method: 'GET' | 'HEAD' | 'POST', url: string, body?: string) => {
    try {
      const response = await request(url, {
        method, body, dispatcher, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: body ? { 'content-type': 'application/jose+json' } : {},
      });
      return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
    } catch (error) {
      throw new AcmeAccountError(`The ACME directory ${directory.directoryUrl} cannot be reached (${(error as { code?: string }).code ?? (error as Error).message}).`);
    }
  };
  try {
    const found = await call('GET', directory.directoryUrl);
    if (found.status !== 200) throw new AcmeAccountError(`The ACME directory ${directory.directoryUrl} answered ${found.status}.`);
    const urls = JSON.parse(found.text) as { newNonce: string; newAccount: string };
    const key = createPrivateKey(keyPem);
    const { crv, kty, x, y } = key.export({ format: 'jwk' }) as JsonWebKey;
    const payload = { termsOfServiceAgreed: true, ...(directory.email ? { contact: [`mailto:${directory.email}`] } : {}) };
    for (let attempt = 0; ; attempt++) {
      const nonce = header((await call('HEAD', urls.newNonce)).headers['replay-nonce']);
      const protectedHeader = base64url(JSON.stringify({ alg: 'ES256', jwk: { crv, kty, x, y }, nonce, url: urls.newAccount }));
      const body = base64url(JSON.stringify(payload));
      const signature = sign('sha256', Buffer.from(`${protectedHeader}.${body}`), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
      const answer = await call('POST', urls.newAccount, JSON.stringify({ protected: protectedHeader, payload: body, signature }));
      if (answer.status === 200 || answer.status === 201) return header(answer.headers.location);
      // A CA may refuse a nonce at random (Pebble does, by design): a fresh one, a few times.
      if (answer.status === 400 && answer.text.includes('badNonce') && attempt < 4) continue;
      const detail = (() => {
        try {
          return (JSON.parse(answer.text) as { detail?: string }).detail;
        } catch {
          return undefined;
        }
      })();
      throw new AcmeAccountError(`The ACME directory ${directory.directoryUrl} refused the account (${answer.status})${detail ? `: ${detail}` : ''}.`);
    }
  } finally {
    await dispatcher?.close();
  }
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

function header(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}
