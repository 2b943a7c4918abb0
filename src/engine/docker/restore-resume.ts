// Where a Docker restore resumed after a crash picks up. The volumes a restore stages carry its
// operation's id (LABEL.stagedBy), and its safety backup's row is made only once they are whole
// and the service is stopped (RestoreHooks.resume.stagedBefore). So an attempt that finds:
// - the service's current volume staged by this restore: the swap was done; only the start is left;
// - the next generation staged by this restore: staged and stopped; the safety backup (if it did
//   not complete) and the swap are left;
// - neither, though it got past the staging: that data is gone (a crash while putting the old
//   data back after a failed start); nothing is staged again with the service stopped.
// An attempt that never got past the staging stages the backup anew, as the first one did.
import { DriverError, type RestoreHooks } from '../driver.js';
import type { DockerApi } from './docker-api.js';
import { LABEL } from './labels.js';

export type RestoreResumePoint = 'stage' | 'swap' | 'start' | 'lost';

export const STAGED_DATA_LOST = 'The restore was interrupted after its staged data had been removed, so nothing was restored and the ' +
  'service keeps its data. Restore the backup again.';

/** `current` and `staged`: a volume of the service's current generation of data, and the same volume of the next. */
export async function restoreResumePoint(api: DockerApi, hooks: RestoreHooks, volumes: { current: string; staged: string }): Promise<RestoreResumePoint> {
  if (!hooks.resume?.stagedBefore) return 'stage';
  const { key } = hooks.resume;
  if (await stagedBy(api, volumes.current) === key) return 'start';
  if (await stagedBy(api, volumes.staged) === key) return 'swap';
  return 'lost';
}

/** The labels a restore's staged volume carries (none when the restore was not told its name). */
export function stagedByLabel(hooks: RestoreHooks): Record<string, string> {
  return hooks.resume ? { [LABEL.stagedBy]: hooks.resume.key } : {};
}

/** Fails a restore whose staged data is gone, the service started again first if it ran. */
export async function failLostStaging(startAgain: (failure: unknown) => Promise<void>, wasRunning: boolean): Promise<never> {
  const error = new DriverError(STAGED_DATA_LOST);
  if (wasRunning) await startAgain(error);
  throw error;
}

async function stagedBy(api: DockerApi, volume: string): Promise<string | undefined> {
  const found = await api.json<{ Labels: Record<string, string> | null } | undefined>('GET', `/volumes/${volume}`, { accept: [404] });
  return found?.Labels?.[LABEL.stagedBy];
}
