// Finds the one thing a capability targets, within the caller's reach. Anything outside it is
// answered exactly like something that does not exist: 404, never 403.
import type { Db } from '../db/connect.js';
import { findBackup } from '../db/repositories/backups.js';
import { findEmail } from '../db/repositories/caught-emails.js';
import { findReachableDecision } from '../db/repositories/decisions.js';
import { findReachableOperation } from '../db/repositories/operations.js';
import { findReachableServer } from '../db/repositories/servers.js';
import { findReachableService } from '../db/repositories/services.js';
import type { TargetSpec } from './capability.js';
import { notFound } from './errors.js';
import type { Reach } from './principal.js';

export async function resolveTarget(
  db: Db,
  reach: Reach,
  target: TargetSpec,
  input: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  if (target.kind === 'team' || target.kind === 'caller') return undefined;
  const id = input[target.from];
  if (id === undefined && target.optional) return undefined;
  if (typeof id !== 'string') throw notFound(target.kind);
  switch (target.kind) {
    case 'service': {
      const service = await findReachableService(db.kysely, reach, id);
      if (!service) throw notFound('ERP service');
      return service;
    }
    case 'server': {
      const server = await findReachableServer(db.kysely, reach, id);
      if (!server) throw notFound('server');
      return server;
    }
    case 'backup': {
      // A backup is reachable when the service it belongs to is.
      const backup = await findBackup(db.kysely, reach.teamId, id);
      if (!backup || !(await findReachableService(db.kysely, reach, backup.service_id))) throw notFound('backup');
      return backup;
    }
    case 'email': {
      // An email is reachable when the copy that caught it is.
      const email = await findEmail(db.kysely, reach.teamId, id);
      if (!email || !(await findReachableService(db.kysely, reach, email.copy_id))) throw notFound('email');
      return email;
    }
    case 'decision': {
      const decision = await findReachableDecision(db.kysely, reach, id);
      if (!decision) throw notFound('decision');
      return { ...decision };
    }
    case 'operation': {
      const operation = await findReachableOperation(db.kysely, reach, id);
      if (!operation) throw notFound('operation');
      return operation;
    }
  }
}
