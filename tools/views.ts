// Row to view mappers, so every capability shows a resource the same way.
import { serviceUrl } from '../src/engine/service-url.js';
import { requestedBy, type InitialCredentials } from '../src/engine/apps/initial-credentials-once.js';
import type { DecisionRow } from '../src/db/repositories/decisions.js';
import type { ActivityRow } from '../src/db/repositories/activity.js';
import type { ActivityView, BackupView, Infer, DecisionView, OperationDetailView, EmailSummaryView, EmailView, OperationView, ServerView, ServiceView } from './schemas.js';
import { decisionStateAt } from '../src/decisions/decision-state.js';
import { locationsOf } from '../src/offsite/locations.js';

type ServiceRow = {
  id: string; name: string; server_id: string; parent_id: string | null; state: Infer<typeof ServiceView>['state'];
  revision: number; port: number | null; published_host: string | null; proxy_upstream: string | null; created_at: string; updated_at: string;
  health: Infer<typeof ServiceView>['health']; health_since: string | null;
};

export function serviceView(row: ServiceRow): Infer<typeof ServiceView> {
  return {
    id: row.id, name: row.name, server_id: row.server_id, parent_id: row.parent_id, is_copy: row.parent_id !== null,
    state: row.state, revision: row.revision,
    url: serviceUrl(row),
    health: row.health, health_since: row.health_since,
    created_at: row.created_at, updated_at: row.updated_at,
  };
}

type ServerRow = Omit<Infer<typeof ServerView>, 'reachable'> & { reachable: number };

export function serverView(row: ServerRow): Infer<typeof ServerView> {
  return { id: row.id, name: row.name, state: row.state, capacity: row.capacity, reachable: row.reachable === 1, created_at: row.created_at };
}

type BackupRow = Omit<Infer<typeof BackupView>, 'locations' | 'verified_at' | 'verify_reason'> & {
  server_copy_reason?: string | null; verified_at?: string | null; verify_reason?: string | null;
};

/** A backup with where it is kept; `offsite`: its off-site copy, when its team had a destination when it completed. */
export function backupView(row: BackupRow, offsite?: { state: 'pending' | 'stored' | 'failed'; reason: string | null }): Infer<typeof BackupView> {
  return {
    id: row.id, service_id: row.service_id, state: row.state, kind: row.kind, size_bytes: row.size_bytes,
    sha256: row.sha256, reason: row.reason, created_at: row.created_at, completed_at: row.completed_at,
    locations: locationsOf(row, offsite), verified_at: row.verified_at ?? null, verify_reason: row.verify_reason ?? null,
  };
}

type OperationRow = Omit<Infer<typeof OperationView>, 'backup_id' | 'decision_id' | 'result'> & {
  parameters: string; decision_id?: string | null; result?: string | null; requested_by_token_id?: string | null;
  requested_by_user_id?: string | null;
};

/** An operation's steps as stored (src/engine/operation-steps.ts); none before it ran. */
export function operationStepsOf(row: { steps?: string | null }): Infer<typeof OperationDetailView>['steps'] {
  return row.steps ? JSON.parse(row.steps) as Infer<typeof OperationDetailView>['steps'] : [];
}

/** Who reads an operation: what its result holds is shown to the token (or the member in the panel) that requested it, and to no one else. */
export interface OperationViewer { tokenId?: string | undefined; userId?: string | undefined }

/**
 * `given`: the initial credentials this very answer carries, taken from the row once
 * (src/engine/apps/initial-credentials-once.ts, tools/operations/operation-answer.ts).
 */
export function operationView(row: OperationRow, viewer?: OperationViewer, given?: InitialCredentials | null): Infer<typeof OperationView> {
  return {
    id: row.id, kind: row.kind, state: row.state, reason: row.reason, service_id: row.service_id,
    server_id: row.server_id, requested_channel: row.requested_channel, created_at: row.created_at,
    started_at: row.started_at, finished_at: row.finished_at,
    // Fixed when a backup or restore is queued, so a client can follow the backup at once.
    backup_id: (JSON.parse(row.parameters) as { backup_id?: string }).backup_id ?? null,
    decision_id: row.decision_id ?? null,
    result: shownResult(row, viewer, given),
  };
}

/**
 * What an operation's result shows: a restore's safety backup, and a recovery's time of data and
 * new server, to every reader (like the backup_id beside it); a created service's initial credentials only to the token that created
 * the service: the credentials themselves in the one answer that took them, after that the
 * sentence left in their place. Every other reader, and a list (which never takes them), sees
 * null until they were shown.
 */
function shownResult(row: OperationRow, viewer: OperationViewer | undefined, given: InitialCredentials | null | undefined): Infer<typeof OperationView>['result'] {
  const shown = resultForViewer(row, viewer, given);
  // What the health watcher added (src/health/crash-loops.ts): to every reader, like a restore's safety backup.
  const crashLoop = row.state === 'succeeded' && row.result ? (JSON.parse(row.result) as { crash_loop?: string }).crash_loop : undefined;
  return crashLoop ? { ...shown, crash_loop: crashLoop } : shown;
}

function resultForViewer(row: OperationRow, viewer: OperationViewer | undefined, given: InitialCredentials | null | undefined): Infer<typeof OperationView>['result'] {
  if (row.state === 'succeeded' && row.kind === 'restore' && row.result) {
    return { safety_backup_id: (JSON.parse(row.result) as { safety_backup_id?: string | null }).safety_backup_id ?? null };
  }
  if (row.state === 'succeeded' && row.kind === 'recover' && row.result) {
    const recovered = JSON.parse(row.result) as { data_as_of: string; server_id: string };
    return { data_as_of: recovered.data_as_of, recovered_on_server_id: recovered.server_id };
  }
  if (row.state === 'succeeded' && row.kind === 'move' && row.result) {
    const moved = JSON.parse(row.result) as { write_pause_ms?: number; rollback_until?: string; dns_change?: string };
    return { write_pause_ms: moved.write_pause_ms, rollback_until: moved.rollback_until, ...(moved.dns_change ? { dns_change: moved.dns_change } : {}) };
  }
  if (row.state !== 'succeeded' || !row.result || !viewer) return null;
  if (!requestedBy(row, viewer)) return null;
  if (given) return { initial_credentials: given };
  const { initial_credentials_shown: shown } = JSON.parse(row.result) as { initial_credentials_shown?: unknown };
  return typeof shown === 'string' ? { initial_credentials_shown: shown } : null;
}

type EmailRow = {
  id: string; copy_id: string; message_id: string | null; sender: string | null; recipients: string; subject: string | null;
  size_bytes: number; attachments: string; received_at: string; text_body?: string | null; html_body?: string | null;
};

export function emailSummaryView(row: EmailRow): Infer<typeof EmailSummaryView> {
  return {
    id: row.id, copy_id: row.copy_id, message_id: row.message_id, sender: row.sender, recipients: JSON.parse(row.recipients),
    subject: row.subject, size_bytes: row.size_bytes, attachments: JSON.parse(row.attachments), received_at: row.received_at,
  };
}

export function emailView(row: EmailRow): Infer<typeof EmailView> {
  return { ...emailSummaryView(row), text_body: row.text_body ?? null, html_body: row.html_body ?? null };
}

export function decisionView(row: DecisionRow): Infer<typeof DecisionView> {
  return {
    id: row.id, state: decisionStateAt(row), question: row.question, context: row.context,
    options: row.options === null ? null : (JSON.parse(row.options) as string[]), answer: row.answer,
    service_id: row.service_id, operation_id: row.operation_id,
    asked_by: { token_id: row.asked_by_token_id, channel: row.asked_channel },
    answered_by: row.answered_by_type && row.answered_by_id
      ? { type: row.answered_by_type, id: row.answered_by_id, channel: row.answered_channel ?? '' } : null,
    answered_at: row.answered_at, created_at: row.created_at, expires_at: row.expires_at,
  };
}

const ACTIVITY_CHANNELS: Record<string, Infer<typeof ActivityView>['channel']> = {
  api: 'rest', mcp: 'mcp', panel: 'panel', cli: 'cli', schedule: 'schedule', retention: 'retention', health: 'health',
};

export function activityView(row: ActivityRow): Infer<typeof ActivityView> {
  return {
    id: row.id, at: row.at,
    token: row.actor_type === 'token' && row.actor_id ? { id: row.actor_id, name: row.token_name, source: row.token_source } : null,
    member: row.actor_type === 'user' && row.actor_id ? { id: row.actor_id, email: row.user_email } : null,
    channel: ACTIVITY_CHANNELS[row.channel] ?? 'rest',
    action: row.action,
    target: row.target_type && row.target_id ? { type: row.target_type, id: row.target_id } : null,
    outcome: row.outcome, code: row.code,
  };
}
