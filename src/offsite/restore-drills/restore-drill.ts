// One restore drill: the proof that a backup's off-site copy restores (restic's `check
// --read-data`, taken to the end). The copy is fetched from the store, decrypted and checked
// against the backup's SHA-256 (the server's copy is not used: restorable-backup.ts), restored
// into a throwaway service on the service's own server, started, health checked, and removed.
// The throwaway is a service of its own (its id: its containers, volumes, network and secrets),
// with a row born deleted so that nothing else ever lists, watches or starts it; it has no mail
// relay (outgoingSmtp null: its containers are given none, so its mail goes nowhere). The
// service's own data, containers, secrets and schedule are never touched. Run again after a
// crash, a drill first removes what the interrupted attempt left of its throwaway.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { nowIso } from '../../db/ids.js';
import type { RestoreDrillRow } from '../../db/repositories/restore-drills.js';
import type { Database } from '../../db/tables.js';
import { DriverError, type ServiceDriver, type ServiceSpec } from '../../engine/driver.js';
import { persistingHooks } from '../../engine/actions/service-of-operation.js';
import { redactSecrets } from '../../engine/redact-secrets.js';
import { loadServiceSpec, serviceSpecQuery, specOf } from '../../engine/service-spec.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { withRestorableBackup } from '../restorable-backup.js';

export interface DrillDeps {
  db: Kysely<Database>;
  driver: ServiceDriver;
  secrets: SecretBox;
  dataDir: string;
  onError(error: unknown, context: string): void;
}

export type DrillOutcome = { verified: true } | { verified: false; reason: string };

const INTERNAL = 'The drill failed because of an internal error; it has been logged.';

export async function runRestoreDrill(deps: DrillDeps, drill: RestoreDrillRow): Promise<DrillOutcome> {
  const { db, driver } = deps;
  // What an interrupted attempt left of its throwaway (containers, volumes, secrets, row) goes first: each attempt starts clean.
  const left = await serviceSpecQuery(db).where('s.id', '=', drill.throwaway_id).executeTakeFirst();
  if (left) await removeThrowaway(deps, specOf(left));
  const backup = await db.selectFrom('backups').select(['id', 'team_id', 'file_path', 'sha256', 'state']).where('id', '=', drill.backup_id).executeTakeFirst();
  if (!backup || backup.state !== 'completed' || !backup.file_path || !backup.sha256) return { verified: false, reason: 'The backup no longer exists.' };
  const source = await loadServiceSpec(db, drill.service_id);
  if (!source) return { verified: false, reason: 'The service no longer exists.' };
  const throwaway = await throwawayOf(db, drill, source);
  const scratch = join(deps.dataDir, 'restore-drills', `${drill.id}.backup`);
  try {
    await driver.provision(throwaway);
    const running = await withRestorableBackup(db, deps.secrets, deps.dataDir,
      { id: backup.id, team_id: backup.team_id, file_path: backup.file_path, sha256: backup.sha256 },
      (path) => driver.restore(throwaway, { path, sha256: backup.sha256! }, {
        ...persistingHooks(db, throwaway.id),
        ranBefore: true,
        resume: { key: drill.id, stagedBefore: false },
        // Nothing to keep: the throwaway has no data of its own.
        beforeSwap: async () => undefined,
      }), { offsiteOnly: { scratch } });
    if (!running) return { verified: false, reason: 'The throwaway service did not start on the restored data.' };
    const status = await driver.status(throwaway);
    if (status.state !== 'running') return { verified: false, reason: 'The throwaway service started on the restored data but then did not answer its health check.' };
    return { verified: true };
  } catch (error) {
    if (error instanceof DriverError) {
      const secrets = await driver.secretValuesOf?.(throwaway).catch(() => []) ?? [];
      return { verified: false, reason: redactSecrets(error.reason, secrets) };
    }
    deps.onError(error, `restore drill ${drill.id} of backup ${drill.backup_id}`);
    return { verified: false, reason: INTERNAL };
  } finally {
    rmSync(scratch, { force: true });
    await removeThrowaway(deps, throwaway);
  }
}

/** Removes the throwaway service of a drill (after it, or when it was given up), then its rows. */
export async function removeThrowaway(deps: DrillDeps, throwaway: ServiceSpec): Promise<void> {
  try {
    await deps.driver.destroy(throwaway);
    await deps.db.deleteFrom('docker_services').where('service_id', '=', throwaway.id).execute();
    await deps.db.deleteFrom('service_secrets').where('service_id', '=', throwaway.id).execute();
    await deps.db.deleteFrom('service_domains').where('service_id', '=', throwaway.id).execute();
    await deps.db.deleteFrom('erp_services').where('id', '=', throwaway.id).where('deleted_at', 'is not', null).execute();
  } catch (error) {
    // Its row stays (born deleted): the next drill of the service, or the next start, removes it.
    deps.onError(error, `removing the throwaway service ${throwaway.id} of a restore drill`);
  }
}

/** The drill's throwaway: the service's app on the service's server, no mail relay, not a copy; its row written once, deleted from birth. */
export async function throwawayOf(db: Kysely<Database>, drill: RestoreDrillRow, source: ServiceSpec): Promise<ServiceSpec> {
  const at = nowIso();
  const name = `Restore drill of ${source.name}`.slice(0, 100);
  await db.insertInto('erp_services').values({
    id: drill.throwaway_id, team_id: drill.team_id, server_id: source.server.id, parent_id: null, name, state: 'stopped', revision: 1,
    port: null, pid: null, outgoing_smtp: null, mail_username: null, mail_password_hash: null, state_reason: null,
    created_at: at, updated_at: at, deleted_at: at, app: source.app ?? null,
  }).onConflict((conflict) => conflict.column('id').doNothing()).execute();
  const row = await db.selectFrom('erp_services').select(['port', 'pid']).where('id', '=', drill.throwaway_id).executeTakeFirstOrThrow();
  return {
    ...source, id: drill.throwaway_id, name, revision: 1, port: row.port, pid: row.pid,
    outgoingSmtp: null, outgoingSmtpAllowPrivate: false, parentId: null,
  };
}
