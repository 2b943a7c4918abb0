// The first login of an app a service runs (issue 29, "the first login"): its admin password is
// one of the service's generated secrets, its login `admin` unless the definition states its own
// (x-teaminfra.initial-credentials, with the other fields a first login needs, such as a company
// name). The create operation's result keeps the password and the fields sealed, bound to the
// service, so the row alone (a database copy, a log of results) never holds them, and the
// operation view opens them only for the token that created the service (tools/views.ts).
import type { SecretBox } from '../../secrets/secret-box.js';
import type { AppDefinition } from './app-definition.js';
import { renderTemplate } from './render-environment.js';

/** The secret that holds an app's admin password; a definition declaring it gets initial credentials (login `admin` unless it says otherwise). */
export const ADMIN_PASSWORD_SECRET = 'ADMIN_PASSWORD';
export const ADMIN_LOGIN = 'admin';

export interface InitialCredentials { login: string; password: string; fields?: Record<string, string> }

/** As kept in the create operation's result: the login in clear (it names no secret), the rest sealed. */
export interface SealedInitialCredentials { login: string; password_sealed: string; fields_sealed?: string }

function contextOf(serviceId: string): string {
  return `initial-credentials:${serviceId}`;
}

/**
 * The definition's first login filled in for a service being created: `values` holds its secrets
 * and the built-ins known then (app-definition.ts, CREDENTIAL_VARIABLES). Null when it has none.
 */
export function initialCredentialsOf(app: AppDefinition, values: Readonly<Record<string, string>>): InitialCredentials | null {
  const password = values[ADMIN_PASSWORD_SECRET];
  if (!app.initialCredentials || password === undefined) return null;
  const fields = Object.entries(app.initialCredentials.fields).map(([field, template]) => [field, renderTemplate(template, values)] as const);
  return { login: renderTemplate(app.initialCredentials.login, values), password, ...(fields.length > 0 ? { fields: Object.fromEntries(fields) } : {}) };
}

export function sealInitialCredentials(secrets: SecretBox, serviceId: string, credentials: InitialCredentials): SealedInitialCredentials {
  return {
    login: credentials.login, password_sealed: secrets.seal(credentials.password, contextOf(serviceId)),
    ...(credentials.fields ? { fields_sealed: secrets.seal(JSON.stringify(credentials.fields), contextOf(serviceId)) } : {}),
  };
}

/** The credentials in a create operation's stored result, opened; null when it has none (or they no longer open). */
export function openInitialCredentials(result: object, serviceId: string, secrets: SecretBox): InitialCredentials | null {
  const sealed = (result as { initial_credentials?: Partial<SealedInitialCredentials> }).initial_credentials;
  if (!sealed?.login || !sealed.password_sealed) return null;
  try {
    const password = secrets.reveal(sealed.password_sealed, contextOf(serviceId));
    if (sealed.fields_sealed === undefined) return { login: sealed.login, password };
    return { login: sealed.login, password, fields: JSON.parse(secrets.reveal(sealed.fields_sealed, contextOf(serviceId))) as Record<string, string> };
  } catch {
    return null;
  }
}
