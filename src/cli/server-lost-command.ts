// `teaminfra admin mark-server-lost --server ID`: the operator declares a server gone for good
// (its disk, its engine). Its services become failed and each can then be made again on another
// server from its newest off-site backup (recover_erp_service); until this is said, no service
// is recovered elsewhere, since it might still run on its server. Prints what it failed.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { markServerLost } from '../engine/lost-server.js';
import { operatorAudit } from './operator-audit.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'mark-server-lost';

async function markServerLostCommand(db: Kysely<Database>, args: string[]): Promise<object> {
  const values = parseOptions(args, { server: { type: 'string' } }, COMMAND);
  const serverId = required(values, 'server', COMMAND);
  const server = await db.selectFrom('servers').select(['id', 'team_id', 'state']).where('id', '=', serverId).where('deleted_at', 'is', null).executeTakeFirst();
  if (!server) throw new UsageError(`${COMMAND}: there is no server ${serverId}.`);
  if (server.state === 'lost') return { server_id: serverId, state: 'lost', failed_services: [], failed_operations: [] };
  const marked = await markServerLost(db, serverId);
  await operatorAudit(db, server.team_id, 'mark_server_lost', 'server', serverId);
  return { server_id: serverId, state: 'lost', failed_services: marked.services, failed_operations: marked.operations };
}

export const SERVER_LOST_COMMANDS = { [COMMAND]: markServerLostCommand };
