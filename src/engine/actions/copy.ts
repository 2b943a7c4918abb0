// Creating a copy: a snapshot of the source's database for the copy, and the copy's own login to
// the mail catcher (issued anew on each attempt, so a resumed operation converges).
import { issueMailCredentials } from '../../mail/mail-credentials.js';
import { DriverError } from '../driver.js';
import { loadServiceSpec } from '../service-spec.js';
import type { ActionContext, ActionResult } from './action-types.js';
import { requireService } from './service-of-operation.js';

export async function copyAction({ db, driver, operation }: ActionContext): Promise<ActionResult> {
  const copy = await requireService(db, operation);
  const { source_id: sourceId } = JSON.parse(operation.parameters) as { source_id: string };
  const source = await loadServiceSpec(db, sourceId);
  if (!source) throw new DriverError('The ERP service to copy no longer exists.');
  await driver.copy(source, copy);
  await driver.storeMailCredentials(copy, await issueMailCredentials(db, copy.id));
  return { result: { source_id: sourceId }, service: { state: 'stopped', reason: null } };
}
