// How long the control plane keeps its own rows. Each setting has a default, an environment
// variable read at start, and an operator setting kept in the database (teaminfra admin
// set-row-retention), which every node sharing the database follows and which wins over both.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';

export const ROW_RETENTION_SETTINGS = {
  /** Audit entries, by their time. */
  audit: { env: 'TEAMINFRA_AUDIT_RETENTION_DAYS', defaultDays: 400 },
  /** Delivered or abandoned webhook deliveries, and the events nothing is left to deliver, after they ended. */
  webhooks: { env: 'TEAMINFRA_WEBHOOK_RETENTION_DAYS', defaultDays: 30 },
  /** Finished operations and their transitions, after they finished; never a service's last one. */
  operations: { env: 'TEAMINFRA_OPERATION_RETENTION_DAYS', defaultDays: 90 },
} as const;

export type RowRetentionName = keyof typeof ROW_RETENTION_SETTINGS;
export type RowRetentionDays = Record<RowRetentionName, number>;

export const ROW_RETENTION_NAMES = Object.keys(ROW_RETENTION_SETTINGS) as RowRetentionName[];

/** At least a day, at most a hundred years: a typo never empties or freezes a table. */
export function parseRetentionDays(text: string): number | null {
  const days = Number(text);
  return /^\d+$/.test(text.trim()) && Number.isInteger(days) && days >= 1 && days <= 36_500 ? days : null;
}

/** The environment's settings, each falling back to its default; a bad value is refused at start. */
export function rowRetentionFromEnv(env: NodeJS.ProcessEnv = process.env): RowRetentionDays {
  const days = {} as RowRetentionDays;
  for (const name of ROW_RETENTION_NAMES) {
    const { env: variable, defaultDays } = ROW_RETENTION_SETTINGS[name];
    const text = env[variable];
    if (text === undefined || text === '') {
      days[name] = defaultDays;
      continue;
    }
    const parsed = parseRetentionDays(text);
    if (parsed === null) throw new Error(`${variable} must be a whole number of days from 1 to 36500 (got "${text}").`);
    days[name] = parsed;
  }
  return days;
}

/** The days in force: the operator's settings in the database over `fallback` (the environment's). */
export async function rowRetentionInForce(db: Kysely<Database>, fallback: RowRetentionDays): Promise<RowRetentionDays> {
  const days = { ...fallback };
  for (const row of await db.selectFrom('row_retention_settings').select(['name', 'days']).execute()) {
    if (row.name in days) days[row.name as RowRetentionName] = row.days;
  }
  return days;
}

/** Sets one; null takes the environment's (or default) value again. */
export async function setRowRetention(db: Kysely<Database>, name: RowRetentionName, days: number | null): Promise<void> {
  if (days === null) {
    await db.deleteFrom('row_retention_settings').where('name', '=', name).execute();
    return;
  }
  await db.insertInto('row_retention_settings').values({ name, days })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ days })).execute();
}
