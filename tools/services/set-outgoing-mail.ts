import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { relayPrivateAllowedFromEnv, setOutgoingRelay } from '../../src/mail/outgoing-relay.js';
import { OutgoingMailView, PlainLine, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'set_outgoing_mail',
  title: "Set a service's mail relay",
  description:
    "Sets a service's SMTP relay from its next start (null: none). Not for copies; private hosts only if the operator allows.",
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({
    service_id: ServiceId(),
    relay: z.strictObject({
      host: z.string().min(1).max(253),
      port: z.number().int().min(1).max(65_535).describe('587 (STARTTLS), 465 (TLS) or 25'),
      // Written into the service's environment and SMTP session: a line break there would forge one.
      user: PlainLine(256).optional(),
      password: z.string().min(1).max(1024).optional().describe('Needs user'),
    }).nullable(),
  }),
  output: OutgoingMailView,
  http: { method: 'PUT', path: '/api/service-erp/{service_id}/outgoing-mail', status: 200 },
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, { db, secrets, target }) => {
    if (!secrets) throw new AppError('conflict', 'This server has no secrets key, so it cannot keep a relay password.');
    const service = target as { id: string; parent_id: string | null };
    const relay = await setOutgoingRelay(db.kysely, secrets, service, input.relay, { allowPrivate: relayPrivateAllowedFromEnv() });
    return { service_id: service.id, relay };
  },
});
