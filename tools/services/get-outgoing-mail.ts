import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { readOutgoingRelay } from '../../src/mail/outgoing-relay.js';
import { OutgoingMailView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'get_outgoing_mail',
  title: "Get a service's mail relay",
  description: "A service's SMTP relay (null: none), without its password.",
  permission: 'services:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OutgoingMailView,
  http: { method: 'GET', path: '/api/service-erp/{service_id}/outgoing-mail', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db }) => ({ service_id: input.service_id, relay: await readOutgoingRelay(db.kysely, input.service_id) }),
});
