// `teaminfra admin run-restore-drill --team T`: runs a restore drill of each of the team's
// services now, in this process, as the weekly schedule does in `serve`
// (src/offsite/restore-drills): the newest backup stored off-site of each is restored into a
// throwaway service on its server, started, health checked and removed. Prints a sentence per
// service with the outcome; the drills' events and each backup's verified_at are written as for
// a scheduled drill.
import type { Kysely } from 'kysely';
import type { Db } from '../db/connect.js';
import { findTeam } from '../db/repositories/teams.js';
import type { Database } from '../db/tables.js';
import { createEngine } from '../engine/engine.js';
import type { RanDrill } from '../offsite/restore-drills/drill-runner.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { operatorAudit } from './operator-audit.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'run-restore-drill';

async function runRestoreDrillCommand(
  db: Kysely<Database>, args: string[], _stdin: () => Promise<string>, secrets: () => Promise<SecretBox>, whole: Db,
): Promise<object> {
  const values = parseOptions(args, { team: { type: 'string' } }, COMMAND);
  const teamId = required(values, 'team', COMMAND);
  if (!(await findTeam(db, teamId))) throw new UsageError(`No team with id ${teamId}.`);
  const destination = await db.selectFrom('backup_destinations').select('id').where('team_id', '=', teamId).where('replaced_at', 'is', null).executeTakeFirst();
  if (!destination) throw new UsageError(`${COMMAND}: team ${teamId} has no off-site backup destination, so no backup of it is stored off-site to drill (set-backup-destination).`);
  // Not started: its driver only, without the worker, the scheduler or the watchers of `serve`.
  const engine = createEngine(whole, await secrets());
  try {
    const ran = await engine.drills.runTeamNow(teamId);
    await operatorAudit(db, teamId, 'run_restore_drill', 'team', teamId);
    return {
      team_id: teamId,
      drills: ran.map((drill) => ({
        service_id: drill.serviceId, backup_id: drill.backupId,
        outcome: 'skipped' in drill.outcome ? 'skipped' : drill.outcome.verified ? 'verified' : 'failed', said: sentenceOf(drill),
      })),
    };
  } finally {
    await engine.close();
  }
}

function sentenceOf(drill: RanDrill): string {
  const service = `${drill.serviceName} (${drill.serviceId})`;
  const { outcome } = drill;
  if ('skipped' in outcome) {
    return outcome.skipped === 'under_way' ? `${service}: a drill of it is already under way; nothing was started.`
      : `${service}: no backup of it is stored off-site yet, so there was nothing to drill.`;
  }
  if (outcome.verified) {
    return `${service}: backup ${drill.backupId} was fetched from off-site, restored into a throwaway service, started and answered its health check; ` +
      'the throwaway was removed.';
  }
  return `${service}: backup ${drill.backupId} did not pass its drill: ${outcome.reason} The throwaway service was removed; the service was not touched.`;
}

export const RESTORE_DRILL_COMMANDS = { [COMMAND]: runRestoreDrillCommand };
