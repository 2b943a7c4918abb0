// `teaminfra admin set-outgoing-mail`: the operator gives a production service its SMTP relay,
// or removes it, by the same rules as set_outgoing_mail (src/mail/outgoing-relay.ts), except
// that the operator may name a private or loopback relay (--allow-private). The password is read
// from stdin, never from the command line (where `ps` and shell histories would show it).
import type { Kysely } from 'kysely';
import { AppError } from '../core/errors.js';
import type { Database } from '../db/tables.js';
import { setOutgoingRelay } from '../mail/outgoing-relay.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { operatorAudit } from './operator-audit.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'set-outgoing-mail';

async function setOutgoingMail(db: Kysely<Database>, args: string[], stdin: () => Promise<string>, secrets: () => Promise<SecretBox>): Promise<object> {
  const values = parseOptions(args, {
    service: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, user: { type: 'string' },
    'password-stdin': { type: 'boolean' }, none: { type: 'boolean' }, 'allow-private': { type: 'boolean' },
  }, COMMAND);
  const serviceId = required(values, 'service', COMMAND);
  const service = await db.selectFrom('erp_services').select(['id', 'team_id', 'parent_id']).where('id', '=', serviceId)
    .where('deleted_at', 'is', null).executeTakeFirst();
  if (!service) throw new UsageError(`${COMMAND}: there is no ERP service ${serviceId}.`);
  let relay: { host: string; port: number; user?: string; password?: string } | null = null;
  if (values.none) {
    if (values.host || values.port || values.user || values['password-stdin']) throw new UsageError(`${COMMAND}: --none takes no --host, --port, --user or --password-stdin.`);
  } else {
    const host = required(values, 'host', COMMAND);
    const port = Number(required(values, 'port', COMMAND));
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new UsageError(`${COMMAND}: --port must be a whole number from 1 to 65535.`);
    relay = { host, port };
    if (values.user) relay.user = required(values, 'user', COMMAND);
    if (values['password-stdin']) {
      if (!relay.user) throw new UsageError(`${COMMAND}: --password-stdin needs --user.`);
      const password = (await stdin()).replace(/\r?\n$/, '');
      if (password === '') throw new UsageError(`${COMMAND}: the password from stdin is empty.`);
      relay.password = password;
    }
  }
  try {
    const set = await setOutgoingRelay(db, await secrets(), service, relay, { allowPrivate: Boolean(values['allow-private']) });
    await operatorAudit(db, service.team_id, 'set_outgoing_mail', 'service', service.id);
    return { service_id: service.id, relay: set, takes_effect: 'at the next start or redeploy of the service' };
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(`${COMMAND}: ${error.detail}`);
    throw error;
  }
}

export const MAIL_COMMANDS = { [COMMAND]: setOutgoingMail };
