// Every event type a webhook can receive, with its description and payload. The OpenAPI
// document lists them under `webhooks`; the Webhooks page offers them as choices.
import { z } from 'zod';
import { DecisionView } from '../../tools/schemas.js';

const Service = z.object({
  id: z.string(), name: z.string(), server_id: z.string(), parent_id: z.string().nullable(),
  state: z.string(), revision: z.number().int(),
}).describe('The ERP service or copy after the change.');

const ServiceData = z.object({
  service: Service,
  operation_id: z.string().nullable().optional(),
  reason: z.string().nullable().optional(),
});

const OperationData = z.object({
  id: z.string(), kind: z.string(), state: z.enum(['queued', 'running', 'succeeded', 'failed', 'awaiting_approval']), reason: z.string().nullable(),
  service_id: z.string().nullable(), server_id: z.string().nullable(), requested_channel: z.string().nullable(), created_at: z.string(),
});

const ServerData = z.object({
  server: z.object({ id: z.string(), name: z.string(), state: z.string(), capacity: z.number().int() }),
  operation_id: z.string().nullable().optional(),
});

const BackupData = z.object({
  backup: z.object({
    id: z.string(), service_id: z.string(), state: z.string(), size_bytes: z.number().nullable(), sha256: z.string().nullable(),
    kind: z.string().optional().describe('manual, scheduled or safety.'),
  }),
  reason: z.string().nullable().optional(),
});

const RestoreData = z.object({ service_id: z.string(), backup_id: z.string(), operation_id: z.string().nullable().optional(), reason: z.string().nullable().optional() });

const EmailData = z.object({
  copy_id: z.string(), email: z.object({ id: z.string(), subject: z.string().nullable(), sender: z.string().nullable(), recipients: z.array(z.string()) }),
});

const DecisionData = z.object({
  decision: DecisionView().describe('The decision as GET /api/decisions/{decision_id} shows it; answer it with POST /api/decisions/{decision_id}/answer.'),
  asked_by: z.object({ token_id: z.string(), token_name: z.string().nullable(), channel: z.string() }),
  action: z.object({
    capability: z.string(), title: z.string(), operation_id: z.string(), service_id: z.string().nullable(),
    server_id: z.string().nullable(), backup_id: z.string().nullable(),
  }).nullable().describe('For an approval: the action that waits for it, on what.'),
});

const CertificateData = z.object({
  service_id: z.string(), domain: z.string().describe('The name, in its ASCII (IDNA) form.'),
  certificate: z.object({ state: z.enum(['pending', 'issued', 'failed']), expires_at: z.string().nullable(), reason: z.string().nullable() }),
});

const TestData = z.object({ message: z.string(), webhook_id: z.string() });

const service = (type: string, description: string) => ({ type, description, data: ServiceData });

export const EVENT_CATALOG = [
  service('service.created', 'An ERP service was created and is being provisioned.'),
  service('service.provisioned', 'An ERP service finished provisioning and is stopped.'),
  service('service.starting', 'An ERP service is starting.'),
  service('service.started', 'An ERP service started and is running.'),
  service('service.stopping', 'An ERP service is stopping.'),
  service('service.stopped', 'An ERP service stopped.'),
  service('service.redeploying', 'An ERP service is being redeployed.'),
  service('service.redeployed', 'An ERP service was redeployed and runs its new revision.'),
  service('service.restoring', 'An ERP service is being restored from a backup.'),
  service('service.failed', 'An ERP service failed; `reason` says why.'),
  service('service.deleting', 'An ERP service is being deleted.'),
  service('service.deleted', 'An ERP service was deleted.'),
  { type: 'server.created', description: 'A server was created.', data: ServerData },
  { type: 'server.ready', description: 'A server is ready to host ERP services.', data: ServerData },
  { type: 'server.failed', description: 'A server could not be prepared.', data: ServerData },
  { type: 'operation.awaiting_approval', description: 'A long action asked by a token that needs approval for it waits for a decision (`decision.needed`).', data: OperationData },
  { type: 'operation.queued', description: 'A long action was accepted and queued.', data: OperationData },
  { type: 'operation.running', description: 'A long action started running.', data: OperationData },
  { type: 'operation.succeeded', description: 'A long action succeeded.', data: OperationData },
  { type: 'operation.failed', description: 'A long action failed; `reason` says why.', data: OperationData },
  service('copy.created', 'A copy of an ERP service was created.'),
  service('copy.deleted', 'A copy of an ERP service was deleted.'),
  { type: 'backup.completed', description: 'A backup completed.', data: BackupData },
  { type: 'backup.failed', description: 'A backup failed; `reason` says why. A scheduled one (kind "scheduled") is tried again a few times, each failure its own event.', data: BackupData },
  { type: 'restore.completed', description: 'A backup was restored into a service.', data: RestoreData },
  { type: 'restore.failed', description: 'A restore failed and changed nothing; `reason` says why.', data: RestoreData },
  { type: 'certificate.issued', description: "A service's name got its certificate (first issued, or after a failure) and is served over HTTPS.", data: CertificateData },
  { type: 'certificate.failed', description: "A service's name could not get its certificate; `certificate.reason` says what to fix. It is tried again by itself.", data: CertificateData },
  { type: 'certificate.expiring', description: "A service's certificate expires within 14 days and its renewal has not succeeded yet.", data: CertificateData },
  { type: 'email.caught', description: "A copy's mail catcher kept an outgoing email.", data: EmailData },
  { type: 'decision.needed', description: 'A coding agent needs a decision from the team (or an approval of an action it asked for).', data: DecisionData },
  { type: 'decision.answered', description: 'A decision was answered.', data: DecisionData },
  { type: 'decision.expired', description: 'A decision expired without an answer (an action waiting for it failed).', data: DecisionData },
  { type: 'webhook.test', description: 'Sent by "Send test event" on the Webhooks page.', data: TestData },
] as const;

export type EventType = (typeof EVENT_CATALOG)[number]['type'];
export const EVENT_TYPES: readonly string[] = EVENT_CATALOG.map((entry) => entry.type);

export function isEventType(value: string): value is EventType {
  return EVENT_TYPES.includes(value);
}

/** The envelope every delivery carries. */
export function envelopeSchema(type: string, data: z.ZodType) {
  return z.object({ type: z.literal(type), timestamp: z.string().describe('ISO-8601 time of the change.'), data });
}
