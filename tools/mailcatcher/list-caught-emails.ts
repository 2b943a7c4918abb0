import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { listEmailsOfCopy } from '../../src/db/repositories/caught-emails.js';
import { toPage } from '../../src/db/pagination.js';
import { EmailSummaryView, PageInput, pageOf, ServiceId } from '../schemas.js';
import { emailSummaryView } from '../views.js';

export default defineCapability({
  name: 'list_caught_emails',
  title: 'List caught emails',
  description: 'Emails a copy sent (caught, not delivered), newest first; may hold reset links.',
  permission: 'mailcatcher:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId().describe('The copy.'), ...PageInput() }),
  output: () => pageOf(EmailSummaryView()),
  http: { method: 'GET', path: '/api/service-erp/{service_id}/emails', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db, target }) => {
    if ((target as { parent_id: string | null }).parent_id === null) {
      throw new AppError('not_found', 'This is an ERP service, not a copy: only copies have a mail catcher.');
    }
    return toPage(await listEmailsOfCopy(db.kysely, input.service_id, input), input.limit, emailSummaryView);
  },
});
