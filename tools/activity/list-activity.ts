import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { ACTION_NAME, listActivity } from '../../src/db/repositories/activity.js';
import { toPage } from '../../src/db/pagination.js';
import { ActivityView, Instant, PageInput, ServiceId, TokenId, pageOf } from '../schemas.js';
import { activityView } from '../views.js';

export default defineCapability({
  name: 'list_activity',
  title: 'List activity',
  description: 'Actions and refusals on every channel, newest first; a limited token sees what it reaches.',
  permission: 'activity:read',
  // A service given must be one the token reaches (404 otherwise), as for its other lists.
  target: { kind: 'service', from: 'service_id', optional: true },
  input: () => z.strictObject({
    token_id: TokenId().optional(),
    service_id: ServiceId().optional(),
    action: z.string().regex(ACTION_NAME, 'Must be an action name, e.g. start_erp_service.').optional(),
    outcome: z.enum(['allowed', 'denied', 'failed']).optional(),
    since: Instant().optional().describe('From this date or ISO 8601 time.'),
    until: Instant().optional().describe('Before this date or ISO 8601 time.'),
    ...PageInput(),
  }),
  output: () => pageOf(ActivityView()),
  http: { method: 'GET', path: '/api/activity', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db, reach }) => toPage(await listActivity(db.kysely, reach, {
    tokenId: input.token_id, serviceId: input.service_id, action: input.action, outcome: input.outcome, since: input.since, until: input.until,
  }, input), input.limit, activityView),
});
