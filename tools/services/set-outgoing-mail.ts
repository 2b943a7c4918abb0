import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { relayPrivateAllowedFromEnv, setOutgoingRelay } from '../../src/mail/outgoing-relay.js';
import { OutgoingMailView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'set_outgoing_mail',
  title: 'Set the outgoing mail relay of an ERP service',
  description:
    'Gives a production ERP service the SMTP relay its outgoing mail goes through (host, port, and optionally a user ' +
    'and password), or with "relay": null, none (it then sends no email). The password is kept sealed and never ' +
    'shown again. It takes effect at the service\'s next start or redeploy. A copy never uses a relay (its mail ' +
    'always goes to its mail catcher): setting one on a copy is refused (409); removing one answers null. A host that is a private, loopback ' +
    'or link-local address, or resolves to one, is refused unless the operator allows it.',
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: z.strictObject({
    service_id: ServiceId,
    relay: z.strictObject({
      host: z.string().min(1).max(253).describe('The relay\'s host name or IP address'),
      port: z.number().int().min(1).max(65_535).describe('Its SMTP port (587 for submission with STARTTLS, 465 for TLS, 25)'),
      user: z.string().min(1).max(256).optional().describe('The user name the service logs in with'),
      password: z.string().min(1).max(1024).optional().describe('Its password (needs user); kept sealed, never shown again'),
    }).nullable().describe('The relay, or null to remove it'),
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
