// The SMTP relay a production service sends its outgoing mail through (set_outgoing_mail, and
// `teaminfra admin set-outgoing-mail`): host and port in erp_services.outgoing_smtp, the login in
// outgoing_mail_logins with the password sealed with the secrets key and bound to the service.
// The drivers read it at a start or a redeploy, so a change takes effect then. A copy has none
// and never gets one: its mail always goes to its mail catcher.
//
// The host is one a team chooses, so it is held to the rules of every address this platform's
// machines are told to reach (src/webhooks/url-safety.ts): no private, loopback or link-local
// address, nor a name that resolves to one, unless the operator allows it. Judged here when it
// is set, and again at each start or redeploy on the address the service is then pinned to
// (relay-address.ts); the operator's allowance is kept with the relay for that.
import type { Kysely } from 'kysely';
import { AppError } from '../core/errors.js';
import { nowIso } from '../db/ids.js';
import type { Database } from '../db/tables.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { checkedRelayAddress, RelayRefused, type AddressLookup } from './relay-address.js';

export interface RelayInput {
  host: string;
  port: number;
  user?: string | null | undefined;
  password?: string | null | undefined;
}

/** What is shown of a relay: never its password, only whether it has one. */
export interface RelayView {
  host: string;
  port: number;
  user: string | null;
  password_set: boolean;
}

/** Serve-wide: team tokens may name a private or loopback relay (TEAMINFRA_SMTP_RELAY_ALLOW_PRIVATE=1), for a relay on the hosts' own network. */
export function relayPrivateAllowedFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TEAMINFRA_SMTP_RELAY_ALLOW_PRIVATE === '1';
}

function passwordContext(serviceId: string): string {
  return `outgoing-mail-password:${serviceId}`;
}

/** "host:port" as erp_services.outgoing_smtp keeps it (the drivers split at the last colon). */
function hostPort(relay: { host: string; port: number }): string {
  return `${relay.host}:${relay.port}`;
}

/**
 * Sets (or with null, removes) the relay of `serviceId`, after the rules: not a copy, a user
 * with a password, a host a team may name. Throws AppError with the sentence to show.
 */
export async function setOutgoingRelay(
  db: Kysely<Database>, secrets: SecretBox, service: { id: string; parent_id: string | null }, relay: RelayInput | null,
  options: { allowPrivate: boolean; lookup?: AddressLookup },
): Promise<RelayView | null> {
  // Removing one from a copy (it never has one) is allowed: it asks for what already holds.
  if (service.parent_id !== null && relay !== null) {
    throw new AppError('conflict', `ERP service ${service.id} is a copy: its outgoing mail always goes to its mail catcher, never to a relay.`);
  }
  if (relay) {
    if (relay.password && !relay.user) throw new AppError('validation_failed', 'A relay password needs a relay user.');
    await checkedRelayAddress(relay.host, options).catch((error: unknown) => {
      throw error instanceof RelayRefused ? new AppError('validation_failed', error.message) : error;
    });
  }
  const at = nowIso();
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('erp_services').set({
      outgoing_smtp: relay ? hostPort(relay) : null, outgoing_smtp_allow_private: relay && options.allowPrivate ? 1 : 0, updated_at: at,
    }).where('id', '=', service.id).execute();
    await trx.deleteFrom('outgoing_mail_logins').where('service_id', '=', service.id).execute();
    if (relay?.user) {
      await trx.insertInto('outgoing_mail_logins').values({
        service_id: service.id, username: relay.user,
        password: relay.password ? secrets.seal(relay.password, passwordContext(service.id)) : null, updated_at: at,
      }).execute();
    }
  });
  return readOutgoingRelay(db, service.id);
}

export async function readOutgoingRelay(db: Kysely<Database>, serviceId: string): Promise<RelayView | null> {
  const row = await db.selectFrom('erp_services as s').leftJoin('outgoing_mail_logins as l', 'l.service_id', 's.id')
    .select(['s.outgoing_smtp', 'l.username', 'l.password']).where('s.id', '=', serviceId).executeTakeFirst();
  if (!row?.outgoing_smtp) return null;
  const separator = row.outgoing_smtp.lastIndexOf(':');
  return {
    host: row.outgoing_smtp.slice(0, separator), port: Number(row.outgoing_smtp.slice(separator + 1)),
    user: row.username ?? null, password_set: row.password !== null && row.password !== undefined,
  };
}

/** The relay's login, its password opened, for a driver filling in the service's environment; null without one. */
export async function relayLoginOf(db: Kysely<Database>, secrets: SecretBox, serviceId: string): Promise<{ user: string; password: string | null } | null> {
  const row = await db.selectFrom('outgoing_mail_logins').select(['username', 'password']).where('service_id', '=', serviceId).executeTakeFirst();
  if (!row) return null;
  return { user: row.username, password: row.password === null ? null : secrets.reveal(row.password, passwordContext(serviceId)) };
}

/** At start (src/secrets/seal-stored-secrets.ts): each relay password sealed with a previous key, sealed with the current one. */
export async function resealRelayPasswords(db: Kysely<Database>, secrets: SecretBox): Promise<number> {
  const rows = await db.selectFrom('outgoing_mail_logins').select(['service_id', 'password']).where('password', 'is not', null).execute();
  let changed = 0;
  for (const row of rows) {
    const sealed = secrets.resealed(row.password as string, passwordContext(row.service_id));
    if (sealed === undefined) continue;
    await db.updateTable('outgoing_mail_logins').set({ password: sealed })
      .where('service_id', '=', row.service_id).where('password', '=', row.password).execute();
    changed += 1;
  }
  return changed;
}
