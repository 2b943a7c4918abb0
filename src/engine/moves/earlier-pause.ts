// When the write pause of a move resumed after a crash began (src/engine/actions/move.ts): a move
// whose worker died after it stopped the service finds it stopped on its old server, so its
// downtime began in the attempt that died, when that attempt's copy made while serving ended
// (the steps it kept say when). Its write_pause_ms counts from then: the service's real downtime,
// the restart of the control plane included; and it is not copied twice more while it serves no
// one. Counted from the first copy's end the steps kept, which after two crashes or more is a
// later copy's: the figure then errs short, never long.
import type { OperationRow } from '../../db/repositories/operations.js';
import type { ServiceDriver, ServiceSpec } from '../driver.js';
import { DRIVER_STEPS, type OperationStep } from '../operation-steps.js';

/** When the pause began, in ms since the epoch, if an earlier attempt of `operation` began it and `source` does not run now; else null. */
export async function pauseBeganEarlier(driver: ServiceDriver, source: ServiceSpec, operation: OperationRow): Promise<number | null> {
  const earlier = JSON.parse(operation.steps ?? '[]') as OperationStep[];
  const copied = earlier.find((step) => step.step === DRIVER_STEPS.transferData && step.outcome === 'done');
  if (!copied) return null;
  const now = await driver.status(source).catch(() => null);
  if (!now || now.state === 'running') return null;
  return Date.parse(copied.at) + copied.duration_ms;
}
