// `teaminfra admin ...`: the operator's commands. They act on the database directly, not
// through the API, so no team token can reach them. Each prints one JSON object.
import { APPROVABLE_ACTIONS, isApprovableAction } from '../decisions/approvable.js';
import type { Kysely } from 'kysely';
import { isPermissionId, PERMISSION_IDS, type PermissionId } from '../auth/permissions.js';
import { isValidDate, isValidTimeZone } from '../auth/expiry.js';
import { hashPassword } from '../auth/password.js';
import { openDatabase, type Db } from '../db/connect.js';
import { newId, nowIso } from '../db/ids.js';
import type { Database, Plan, Role } from '../db/tables.js';
import { setTeamRetention } from '../db/repositories/backup-retention.js';
import { insertServer } from '../db/repositories/servers.js';
import { insertService } from '../db/repositories/services.js';
import { findActiveMember, findTeam, insertTeam, setTeamPlan, upsertMember } from '../db/repositories/teams.js';
import { createToken } from '../db/repositories/tokens.js';
import { parseArgs } from 'node:util';
import { backupCount, COMMON_OPTIONS, dataLocationOf, listOption, parseOptions, required } from './options.js';
import { secureDataDir } from './secure-data-dir.js';
import { UsageError } from './usage.js';
import { createDockerServer, DOCKER_COMMANDS } from './docker-commands.js';
import { APP_COMMANDS } from './app-commands.js';
import { RETENTION_COMMANDS } from './retention-commands.js';
import { MAIL_COMMANDS } from './mail-commands.js';
import { NOTIFICATION_COMMANDS } from './notification-commands.js';
import { REGISTRY_COMMANDS } from './registry-commands.js';
import { BACKUP_DESTINATION_COMMANDS } from './backup-destination-command.js';
import { SERVER_LOST_COMMANDS } from './server-lost-command.js';
import { RESTORE_DRILL_COMMANDS } from './restore-drill-command.js';
import { PROXY_COMMANDS } from './proxy-commands.js';
import { operatorAudit } from './operator-audit.js';
import { createWebhook } from '../webhooks/create-webhook.js';
import { webhookConfigFromEnv } from '../webhooks/config.js';
import { WebhookRefusal } from '../webhooks/url-safety.js';
import { SecretBox } from '../secrets/secret-box.js';
import { checkSecretsKey } from '../secrets/seal-stored-secrets.js';
import { loadSecretsKeys } from '../secrets/secrets-key.js';

const PLANS: readonly Plan[] = ['free', 'starter', 'business', 'enterprise'];
const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

/** `secrets()` gives the box that seals webhook secrets, once the database is known to use its key. */
type Handler = (db: Kysely<Database>, args: string[], stdin: () => Promise<string>, secrets: () => Promise<SecretBox>, whole: Db) => Promise<object>;

const COMMANDS: Record<string, Handler> = {
  ...DOCKER_COMMANDS,
  ...APP_COMMANDS,
  ...RETENTION_COMMANDS,
  ...MAIL_COMMANDS,
  ...NOTIFICATION_COMMANDS,
  ...REGISTRY_COMMANDS,
  ...BACKUP_DESTINATION_COMMANDS,
  ...SERVER_LOST_COMMANDS,
  ...RESTORE_DRILL_COMMANDS,
  ...PROXY_COMMANDS,
  'create-team': async (db, args) => {
    const values = parseOptions(args, { name: { type: 'string' }, plan: { type: 'string' }, timezone: { type: 'string' } }, 'create-team');
    const plan = oneOf(values.plan ?? 'starter', PLANS, 'plan');
    const timezone = values.timezone ?? 'UTC';
    if (!isValidTimeZone(timezone)) throw new UsageError(`create-team: unknown time zone "${timezone}"; use an IANA name such as Europe/Brussels.`);
    const id = await insertTeam(db, { name: required(values, 'name', 'create-team'), plan, timezone });
    await operatorAudit(db, id, 'create_team', 'team', id);
    return { id };
  },
  'set-plan': async (db, args) => {
    const values = parseOptions(args, { team: { type: 'string' }, plan: { type: 'string' } }, 'set-plan');
    const teamId = await existingTeam(db, required(values, 'team', 'set-plan'));
    await setTeamPlan(db, teamId, oneOf(required(values, 'plan', 'set-plan'), PLANS, 'plan'));
    await operatorAudit(db, teamId, 'set_plan', 'team', teamId);
    return { id: teamId };
  },
  'add-member': async (db, args, stdin) => {
    const values = parseOptions(args, {
      team: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, 'password-stdin': { type: 'boolean' },
    }, 'add-member');
    const teamId = await existingTeam(db, required(values, 'team', 'add-member'));
    const email = required(values, 'email', 'add-member');
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError(`add-member: "${email}" is not an email address.`);
    const role = oneOf(required(values, 'role', 'add-member'), ROLES, 'role');
    let passwordHash: string | null = null;
    if (values['password-stdin']) {
      const password = (await stdin()).replace(/\r?\n$/, '');
      if (password.length < 8) throw new UsageError('add-member: the password from stdin must have at least 8 characters.');
      passwordHash = await hashPassword(password);
    }
    const id = await upsertMember(db, { teamId, email, role, passwordHash });
    await operatorAudit(db, teamId, 'add_member', 'user', id);
    return { id };
  },
  'create-server': async (db, args) => {
    const values = parseOptions(args, {
      team: { type: 'string' }, name: { type: 'string' }, 'docker-host': { type: 'string' }, image: { type: 'string' },
    }, 'create-server');
    const teamId = await existingTeam(db, required(values, 'team', 'create-server'));
    const name = required(values, 'name', 'create-server');
    if (values.image !== undefined && values['docker-host'] === undefined) throw new UsageError('create-server: --image needs --docker-host.');
    const id = values['docker-host'] === undefined
      ? await insertServer(db, { teamId, name })
      : await createDockerServer(db, { teamId, name, dockerHost: values['docker-host'], image: values.image ?? null });
    await operatorAudit(db, teamId, 'create_server', 'server', id);
    return { id };
  },
  'create-service': async (db, args) => {
    const values = parseOptions(args, { team: { type: 'string' }, server: { type: 'string' }, name: { type: 'string' } }, 'create-service');
    const teamId = await existingTeam(db, required(values, 'team', 'create-service'));
    const serverId = required(values, 'server', 'create-service');
    await assertOwned(db, 'servers', teamId, [serverId], 'server');
    const id = await insertService(db, { teamId, serverId, name: required(values, 'name', 'create-service') });
    await operatorAudit(db, teamId, 'create_erp_service', 'service', id);
    return { id };
  },
  'create-token': async (db, args) => {
    const values = parseOptions(args, {
      team: { type: 'string' }, name: { type: 'string' }, 'accepted-by': { type: 'string' },
      permissions: { type: 'string' }, 'full-access': { type: 'boolean' }, services: { type: 'string' },
      servers: { type: 'string' }, 'expires-on': { type: 'string' }, 'created-by': { type: 'string' },
      'needs-approval': { type: 'string' },
    }, 'create-token');
    const teamId = await existingTeam(db, required(values, 'team', 'create-token'));
    const permissions = listOption(values.permissions);
    if ((permissions === null) === !values['full-access']) {
      throw new UsageError('create-token: give exactly one of --permissions p1,p2 or --full-access.');
    }
    const unknown = (permissions ?? []).filter((id) => !isPermissionId(id));
    if (unknown.length > 0 || (permissions !== null && permissions.length === 0)) {
      throw new UsageError(`create-token: unknown permission ${unknown.join(', ') || '(empty list)'}; known: ${PERMISSION_IDS.join(', ')}.`);
    }
    const needsApproval = listOption(values['needs-approval']) ?? [];
    const notApprovable = needsApproval.filter((name) => !isApprovableAction(name));
    if (notApprovable.length > 0) {
      throw new UsageError(`create-token: --needs-approval names actions that cannot wait for approval: ${notApprovable.join(', ')}; ` +
        `choose among ${APPROVABLE_ACTIONS.join(', ')}.`);
    }
    const expiresOn = values['expires-on'] ?? null;
    if (expiresOn !== null && !isValidDate(expiresOn)) throw new UsageError('create-token: --expires-on must be a date, YYYY-MM-DD.');
    const serviceIds = listOption(values.services);
    const serverIds = listOption(values.servers);
    if (serviceIds) await assertOwned(db, 'erp_services', teamId, serviceIds, 'ERP service');
    if (serverIds) await assertOwned(db, 'servers', teamId, serverIds, 'server');
    let createdByUserId: string | null = null;
    if (values['created-by']) {
      const member = await findActiveMember(db, teamId, values['created-by']);
      if (!member) throw new UsageError(`create-token: ${values['created-by']} is not a member of team ${teamId}.`);
      createdByUserId = member.user_id;
    }
    const token = await createToken(db, {
      teamId, name: required(values, 'name', 'create-token'), source: 'panel',
      acceptedBy: oneOf(values['accepted-by'] ?? 'both', ['api', 'mcp', 'both'] as const, 'accepted-by'),
      fullAccess: Boolean(values['full-access']), permissions: (permissions ?? []) as PermissionId[],
      serviceIds, serverIds, expiresOn, createdByUserId, needsApproval,
    });
    await operatorAudit(db, teamId, 'create_token', 'token', token.id);
    return { id: token.id, token: token.value };
  },
  'set-backup-retention': async (db, args) => {
    const values = parseOptions(args, {
      team: { type: 'string' }, 'keep-manual': { type: 'string' }, 'keep-safety': { type: 'string' },
    }, 'set-backup-retention');
    const teamId = await existingTeam(db, required(values, 'team', 'set-backup-retention'));
    if (values['keep-manual'] === undefined && values['keep-safety'] === undefined) {
      throw new UsageError('set-backup-retention: give --keep-manual N and/or --keep-safety N ("default" takes the operator\'s default again).');
    }
    // "default" (or leaving an option out) takes the operator's TEAMINFRA_KEEP_* setting.
    const count = (option: 'keep-manual' | 'keep-safety', least: number) => {
      const text = values[option];
      return text === undefined || text === 'default' ? null : backupCount(`set-backup-retention: --${option}`, text, least);
    };
    await setTeamRetention(db, teamId, { manual: count('keep-manual', 1), safety: count('keep-safety', 0) });
    await operatorAudit(db, teamId, 'set_backup_retention', 'team', teamId);
    return { id: teamId };
  },
  'remove-member': async (db, args) => {
    const values = parseOptions(args, { team: { type: 'string' }, email: { type: 'string' } }, 'remove-member');
    const teamId = await existingTeam(db, required(values, 'team', 'remove-member'));
    const email = required(values, 'email', 'remove-member');
    const member = await findActiveMember(db, teamId, email);
    if (!member) throw new UsageError(`remove-member: ${email} is not a member of team ${teamId}.`);
    if (member.role === 'owner') {
      const owners = await db.selectFrom('memberships').select(db.fn.countAll<number>().as('count'))
        .where('team_id', '=', teamId).where('role', '=', 'owner').where('removed_at', 'is', null).executeTakeFirstOrThrow();
      if (Number(owners.count) <= 1) throw new UsageError(`remove-member: ${email} is the team's last owner; a team always keeps one.`);
    }
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('memberships').set({ removed_at: nowIso() })
        .where('team_id', '=', teamId).where('user_id', '=', member.user_id).execute();
      await trx.deleteFrom('panel_sessions').where('user_id', '=', member.user_id).where('team_id', '=', teamId).execute();
    });
    await operatorAudit(db, teamId, 'remove_member', 'user', member.user_id);
    return { removed: true };
  },
  'create-webhook': async (db, args, _stdin, secrets) => {
    const values = parseOptions(args, {
      team: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, 'allow-private': { type: 'boolean' },
      description: { type: 'string' },
    }, 'create-webhook');
    const teamId = await existingTeam(db, required(values, 'team', 'create-webhook'));
    try {
      const webhook = await createWebhook(db, webhookConfigFromEnv(), await secrets(), {
        teamId, url: required(values, 'url', 'create-webhook'), description: values.description,
        eventTypes: listOption(values.events) ?? '*', allowPrivate: Boolean(values['allow-private']),
      });
      await operatorAudit(db, teamId, 'create_webhook', 'webhook', webhook.id);
      return webhook;
    } catch (error) {
      if (error instanceof WebhookRefusal) throw new UsageError(`create-webhook: ${error.message}`);
      throw error;
    }
  },
};

export async function runAdmin(args: string[], stdin: () => Promise<string>): Promise<object> {
  const [command, ...rest] = args;
  const handler = command ? COMMANDS[command] : undefined;
  if (!handler) {
    throw new UsageError(`admin: unknown command "${command ?? ''}"; one of: ${Object.keys(COMMANDS).join(', ')}.`);
  }
  // Lenient here, only to find the database; the handler parses every option strictly.
  const common = parseArgs({ args: rest, options: COMMON_OPTIONS, strict: false, allowPositionals: true }).values;
  const location = dataLocationOf(common);
  // Tightened like serve does: an admin command can be the first to run on a directory an earlier
  // version left group-readable, and it writes the database there.
  if (!location.database) secureDataDir(location.dataDir, { tighten: true });
  const db = openDatabase(location.dataDir, location.database);
  const secrets = async () => {
    const box = new SecretBox(loadSecretsKeys(location.dataDir));
    await checkSecretsKey(db.kysely, box);
    return box;
  };
  try {
    return await handler(db.kysely, rest, stdin, secrets, db);
  } finally {
    await db.close();
  }
}

function oneOf<T extends string>(value: string, allowed: readonly T[], name: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}; got "${value}".`);
  return value as T;
}

async function existingTeam(db: Kysely<Database>, teamId: string): Promise<string> {
  if (!(await findTeam(db, teamId))) throw new UsageError(`No team with id ${teamId}.`);
  return teamId;
}

async function assertOwned(db: Kysely<Database>, table: 'servers' | 'erp_services', teamId: string, ids: string[], what: string) {
  for (const id of ids) {
    const row = await db.selectFrom(table).select('id').where('id', '=', id).where('team_id', '=', teamId)
      .where('deleted_at', 'is', null).executeTakeFirst();
    if (!row) throw new UsageError(`No ${what} with id ${id} in team ${teamId}.`);
  }
}

