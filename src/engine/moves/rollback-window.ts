// How long the server a service moved off keeps the stopped service and its data, for
// rollback_erp_service_move: an installation setting, TEAMINFRA_MOVE_ROLLBACK_HOURS (hours, 24
// by default; a fraction of an hour is allowed, for a test or an installation short of disk).
// Read at each switch, so the window of a move is the one in force when it switched.

export const DEFAULT_MOVE_ROLLBACK_HOURS = 24;

/** The window in milliseconds; throws a sentence on a value that is not a positive number of hours up to a year. */
export function moveRollbackMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.TEAMINFRA_MOVE_ROLLBACK_HOURS;
  if (text === undefined || text.trim() === '') return DEFAULT_MOVE_ROLLBACK_HOURS * 3_600_000;
  const hours = Number(text);
  if (!Number.isFinite(hours) || hours <= 0 || hours > 8_760) {
    throw new Error(`TEAMINFRA_MOVE_ROLLBACK_HOURS must be a number of hours above 0 and up to 8760 (default ${DEFAULT_MOVE_ROLLBACK_HOURS}); it is "${text}".`);
  }
  return Math.round(hours * 3_600_000);
}
