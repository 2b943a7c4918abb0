import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { EmailId, EmailView } from '../schemas.js';
import { emailView } from '../views.js';

export default defineCapability({
  name: 'get_caught_email',
  title: 'Read a caught email',
  description: 'One email a copy sent: headers, bodies, attachments.',
  permission: 'mailcatcher:read',
  target: { kind: 'email', from: 'email_id' },
  input: () => z.strictObject({ email_id: EmailId() }),
  output: EmailView,
  http: { method: 'GET', path: '/api/emails/{email_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  // An email may hold a reset link: each read is a row of the activity trail.
  recordedRead: true,
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { target }) => emailView(target as Parameters<typeof emailView>[0]),
});
