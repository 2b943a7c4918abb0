// The events the engine writes to the outbox, one per state change, for webhooks to deliver.
// Each is described, with its payload, in src/webhooks/event-catalog.ts (checked by a test).
import type { ServiceState } from '../db/tables.js';
import type { OperationKind } from '../db/repositories/operations.js';

export const ENGINE_EVENT_TYPES = [
  'service.created', 'service.provisioned', 'service.starting', 'service.started', 'service.stopping', 'service.stopped',
  'service.redeploying', 'service.redeployed', 'service.restoring', 'service.failed', 'service.deleting', 'service.deleted',
  'copy.created', 'copy.deleted',
  'backup.completed', 'backup.failed', 'backup.offsite_stored', 'backup.offsite_failed', 'backup.verified', 'backup.verify_failed',
  'restore.completed', 'restore.failed',
  'certificate.issued', 'certificate.failed', 'certificate.expiring',
  'server.created', 'server.ready', 'server.failed', 'server.lost',
  'operation.queued', 'operation.running', 'operation.succeeded', 'operation.failed', 'operation.awaiting_approval',
] as const;

export type EngineEventType = (typeof ENGINE_EVENT_TYPES)[number];

/** The event for a service reaching `state` because of an operation of `kind`. */
export function serviceEventType(state: ServiceState, kind: OperationKind | 'reconcile', deleted = false): EngineEventType {
  if (deleted) return 'service.deleted';
  switch (state) {
    case 'provisioning': return 'service.created';
    case 'starting': return 'service.starting';
    case 'stopping': return 'service.stopping';
    case 'redeploying': return 'service.redeploying';
    case 'deleting': return 'service.deleting';
    case 'running': return kind === 'redeploy' ? 'service.redeployed' : 'service.started';
    // A copy is announced once it exists with its data (its row appears with operation.queued).
    case 'stopped': return kind === 'create' ? 'service.provisioned' : kind === 'copy' ? 'copy.created' : 'service.stopped';
    case 'restoring': return 'service.restoring';
    case 'failed': return 'service.failed';
  }
}
