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

const OffsiteData = z.object({
  backup: z.object({ id: z.string(), service_id: z.string(), kind: z.string() }),
  location: z.object({
    kind: z.literal('offsite'), state: z.enum(['stored', 'pending', 'failed']),
    reason: z.string().nullable().describe('What failed, in a sentence; null once stored.'),
  }),
});

const DrillData = z.object({
  backup: z.object({ id: z.string(), service_id: z.string(), kind: z.string() }),
  drill: z.object({
    id: z.string(), state: z.enum(['verified', 'failed']), at: z.string(),
    reason: z.string().nullable().describe('What failed, in a sentence; null when verified.'),
  }),
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

const Health = z.enum(['healthy', 'unhealthy', 'unknown']);
const WatchedService = Service.extend({
  url: z.string().nullable(), health: Health, health_since: z.string().nullable().describe('When the service\'s health last changed.'),
});
const UnhealthyData = z.object({
  service: WatchedService,
  checks_failed: z.number().int().describe('Failed health checks in a row (3 starts an incident).'),
  failing_since: z.string().describe('The first failed check of the row.'),
  last_answer: z.string().describe('What the last check got: "HTTP 503", "no answer within 5 s", "connection refused", ...'),
  health_path: z.string(),
});
const RecoveredData = z.object({
  service: WatchedService,
  after: z.enum(['unhealthy', 'crash_loop']).describe('What it recovered from.'),
  since: z.string().describe('When that began.'),
});
const CrashLoopData = z.object({
  service: WatchedService,
  restarts: z.number().int().describe('Restarts by the engine within the window.'),
  window_minutes: z.number().int(),
  operation_id: z.string().nullable().describe('The start, redeploy or restore that ended within 5 minutes before (its result says so too); else null.'),
});
const Reachability = ServerData.shape.server.extend({ reachable: z.boolean(), reachable_since: z.string().nullable() });
const UnreachableData = z.object({
  server: Reachability, failed_pings: z.number().int(),
  error: z.string().describe('Why the engine did not answer (its address and the call named, no secret).'),
});
const ServerRecoveredData = z.object({ server: Reachability, since: z.string().describe('When it stopped answering.') });

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
  { type: 'service.unhealthy', description: 'A running ERP service failed its health check 3 times in a row (once per incident).', data: UnhealthyData },
  { type: 'service.recovered', description: 'An ERP service answers its health check again after service.unhealthy, or its engine stopped restarting it after service.crash_loop.', data: RecoveredData },
  { type: 'service.crash_loop', description: 'The engine restarted an ERP service\'s container 3 times or more within 5 minutes (once per incident).', data: CrashLoopData },
  { type: 'server.created', description: 'A server was created.', data: ServerData },
  { type: 'server.ready', description: 'A server is ready to host ERP services.', data: ServerData },
  { type: 'server.failed', description: 'A server could not be prepared.', data: ServerData },
  { type: 'server.unreachable', description: 'A Docker server\'s engine did not answer 3 pings in a row (once per incident).', data: UnreachableData },
  { type: 'server.recovered', description: 'A Docker server\'s engine answers again after server.unreachable.', data: ServerRecoveredData },
  { type: 'server.lost', description: 'The operator marked a server lost (teaminfra admin mark-server-lost): its services are failed, and each can be made again on another server from its newest off-site backup (recover_erp_service).', data: ServerData },
  { type: 'operation.awaiting_approval', description: 'A long action asked by a token that needs approval for it waits for a decision (`decision.needed`).', data: OperationData },
  { type: 'operation.queued', description: 'A long action was accepted and queued.', data: OperationData },
  { type: 'operation.running', description: 'A long action started running.', data: OperationData },
  { type: 'operation.succeeded', description: 'A long action succeeded.', data: OperationData },
  { type: 'operation.failed', description: 'A long action failed; `reason` says why.', data: OperationData },
  service('copy.created', 'A copy of an ERP service was created.'),
  service('copy.deleted', 'A copy of an ERP service was deleted.'),
  { type: 'backup.completed', description: 'A backup completed.', data: BackupData },
  { type: 'backup.failed', description: 'A backup failed; `reason` says why. A scheduled one (kind "scheduled") is tried again a few times, each failure its own event.', data: BackupData },
  { type: 'backup.offsite_stored', description: "A backup's encrypted copy is stored at the team's off-site destination (the store confirmed it whole).", data: OffsiteData },
  { type: 'backup.offsite_failed', description: "A backup's off-site copy could not be stored: `location.reason` says why. State `pending`: it is tried again later; `failed`: the store refused it, and it is tried again once the destination is saved anew. The server's copy is kept either way.", data: OffsiteData },
  { type: 'backup.verified', description: "A restore drill proved the backup restores: its off-site copy was fetched, decrypted, checked, restored into a throwaway service on the service's server, started and health checked, then removed. The service itself was not touched.", data: DrillData },
  { type: 'backup.verify_failed', description: "A restore drill of the backup failed: `drill.reason` says what failed (the off-site copy changed or damaged in the store, the restore, the start). The service itself was not touched.", data: DrillData },
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
