// The operator's retention commands (`teaminfra admin ...`): how long the control plane keeps its
// own rows, and a team's default backup schedule for its new services. Both are kept in the
// database, so every node sharing it follows them.
import type { Kysely } from 'kysely';
import type { BackupScheduleFields, Database } from '../db/tables.js';
import { findTeam } from '../db/repositories/teams.js';
import { setTeamDefaultSchedule } from '../db/repositories/backup-schedules.js';
import { MAX_KEEP, TIME_OF_DAY } from '../engine/backup-schedule/schedule-rules.js';
import {
  parseRetentionDays, ROW_RETENTION_NAMES, rowRetentionFromEnv, rowRetentionInForce, setRowRetention, type RowRetentionName,
} from '../engine/row-retention/retention-settings.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

const OPTION_OF: Record<RowRetentionName, 'audit-days' | 'webhook-days' | 'operation-days'> = { audit: 'audit-days', webhooks: 'webhook-days', operations: 'operation-days' };

export const RETENTION_COMMANDS = {
  'set-row-retention': async (db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, {
      'audit-days': { type: 'string' }, 'webhook-days': { type: 'string' }, 'operation-days': { type: 'string' },
    }, 'set-row-retention');
    const given = ROW_RETENTION_NAMES.filter((name) => values[OPTION_OF[name]] !== undefined);
    if (given.length === 0) {
      throw new UsageError('set-row-retention: give --audit-days N, --webhook-days N and/or --operation-days N ("default" takes the environment\'s or default value again).');
    }
    for (const name of given) {
      const text = values[OPTION_OF[name]] as string;
      const days = text === 'default' ? null : parseRetentionDays(text);
      if (days === null && text !== 'default') throw new UsageError(`set-row-retention: --${OPTION_OF[name]} must be a whole number of days from 1 to 36500, or "default"; got "${text}".`);
      await setRowRetention(db, name, days);
    }
    // What this node would apply: its environment, under the settings just kept.
    const inForce = await rowRetentionInForce(db, rowRetentionFromEnv());
    return Object.fromEntries(ROW_RETENTION_NAMES.map((name) => [`${name}_days`, inForce[name]]));
  },
  'set-backup-schedule-default': async (db: Kysely<Database>, args: string[]) => {
    const values = parseOptions(args, {
      team: { type: 'string' }, frequency: { type: 'string' }, time: { type: 'string' },
      'keep-daily': { type: 'string' }, 'keep-weekly': { type: 'string' }, 'keep-monthly': { type: 'string' },
    }, 'set-backup-schedule-default');
    const teamId = required(values, 'team', 'set-backup-schedule-default');
    if (!(await findTeam(db, teamId))) throw new UsageError(`No team with id ${teamId}.`);
    const frequency = values.frequency ?? 'daily';
    if (frequency !== 'off' && frequency !== 'hourly' && frequency !== 'daily') {
      throw new UsageError(`set-backup-schedule-default: --frequency must be off, hourly or daily; got "${frequency}".`);
    }
    const time = values.time ?? '03:00';
    if (!TIME_OF_DAY.test(time)) throw new UsageError(`set-backup-schedule-default: --time must be HH:MM (00:00 to 23:59); got "${time}".`);
    const count = (option: 'keep-daily' | 'keep-weekly' | 'keep-monthly', fallback: number, least: number) => {
      const text = values[option] ?? String(fallback);
      const n = Number(text);
      if (!/^\d+$/.test(text) || n < least || n > MAX_KEEP) {
        throw new UsageError(`set-backup-schedule-default: --${option} must be a number from ${least} to ${MAX_KEEP}; got "${text}".`);
      }
      return n;
    };
    const fields: BackupScheduleFields = {
      frequency, time_of_day: time,
      keep_daily: count('keep-daily', 7, 1), keep_weekly: count('keep-weekly', 4, 0), keep_monthly: count('keep-monthly', 6, 0),
    };
    await setTeamDefaultSchedule(db, teamId, fields);
    return { team_id: teamId, frequency, time, keep_daily: fields.keep_daily, keep_weekly: fields.keep_weekly, keep_monthly: fields.keep_monthly };
  },
};

