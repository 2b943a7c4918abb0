// The first login of an app a service runs (issue 29, "the first login"): its admin password is
// one of the service's generated secrets; the create operation's result keeps it sealed, bound
// to the service, so the row alone (a database copy, a log of results) never holds it, and the
// operation view opens it only for the token that created the service (tools/views.ts).
import type { SecretBox } from '../../secrets/secret-box.js';

/** The secret that holds an app's admin password; a definition declaring it gets initial credentials with the login `admin`. */
export const ADMIN_PASSWORD_SECRET = 'ADMIN_PASSWORD';
export const ADMIN_LOGIN = 'admin';

export interface SealedInitialCredentials { login: string; password_sealed: string }

function contextOf(serviceId: string): string {
  return `initial-credentials:${serviceId}`;
}

export function sealInitialCredentials(secrets: SecretBox, serviceId: string, password: string): SealedInitialCredentials {
  return { login: ADMIN_LOGIN, password_sealed: secrets.seal(password, contextOf(serviceId)) };
}

/** The credentials in a create operation's stored result, opened; null when it has none (or they no longer open). */
export function openInitialCredentials(result: object, serviceId: string, secrets: SecretBox): { login: string; password: string } | null {
  const sealed = (result as { initial_credentials?: Partial<SealedInitialCredentials> }).initial_credentials;
  if (!sealed?.login || !sealed.password_sealed) return null;
  try {
    return { login: sealed.login, password: secrets.reveal(sealed.password_sealed, contextOf(serviceId)) };
  } catch {
    return null;
  }
}
