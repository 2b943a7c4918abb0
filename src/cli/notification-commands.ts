// `teaminfra admin set-notification-mail`: the installation's outgoing relay for the emails about
// incidents (src/health/incidents.ts), to teams' owners and admins. An operator setting: no team
// token can change where these emails go. Plain SMTP to a relay the operator runs (no login).
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { nowIso } from '../db/ids.js';
import { setNotificationMail } from '../db/repositories/incidents.js';
import type { Database } from '../db/tables.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'set-notification-mail';

async function setNotificationMailCommand(db: Kysely<Database>, args: string[]): Promise<object> {
  const values = parseOptions(args, { relay: { type: 'string' }, from: { type: 'string' } }, COMMAND);
  const relay = relayOf(required(values, 'relay', COMMAND));
  const from = values.from ?? `teaminfra@${hostname()}`;
  if (!/^[^@\s<>]+@[^@\s<>]+$/.test(from)) throw new UsageError(`${COMMAND}: --from "${from}" is not an email address.`);
  await setNotificationMail(db, { ...relay, from }, nowIso());
  return { relay: `smtp://${relay.host.includes(':') ? `[${relay.host}]` : relay.host}:${relay.port}`, from };
}

function relayOf(text: string): { host: string; port: number } {
  // The value is not repeated: it may hold a password someone tried to give with it.
  const refused = `${COMMAND}: --relay must be smtp://HOST:PORT, a relay that takes plain SMTP without a login.`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(refused);
  }
  const port = Number(url.port);
  if (url.protocol !== 'smtp:' || url.hostname === '' || !Number.isInteger(port) || port < 1 || url.username || url.password
    || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    throw new UsageError(refused);
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

export const NOTIFICATION_COMMANDS = { [COMMAND]: setNotificationMailCommand };
