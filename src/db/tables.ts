// Typed rows of schema.sql, as Kysely sees them. Keep in step with schema.sql.
import type { ColumnType } from 'kysely';
export type Plan = 'free' | 'starter' | 'business' | 'enterprise';
export type Role = 'owner' | 'admin' | 'member';
export type AcceptedBy = 'api' | 'mcp' | 'both';
export type TokenSource = 'panel' | 'cli' | 'assistant' | 'legacy';
export type ServiceState =
  | 'provisioning' | 'stopped' | 'starting' | 'running' | 'stopping'
  | 'redeploying' | 'restoring' | 'failed' | 'deleting';
export type OperationState = 'queued' | 'running' | 'succeeded' | 'failed' | 'awaiting_approval';
export type DecisionState = 'pending' | 'answered' | 'expired' | 'cancelled';

export interface TeamsTable { id: string; name: string; plan: Plan; timezone: string; created_at: string }

export interface UsersTable {
  id: string; email: string; password_hash: string | null; created_at: string; last_sign_in_at: string | null;
}

export interface MembershipsTable {
  team_id: string; user_id: string; role: Role; created_at: string; removed_at: string | null;
}

export interface ServersTable {
  id: string; team_id: string; name: string; node: string | null; root_dir: string | null;
  capacity: number; state: string; created_at: string; deleted_at: string | null;
  /** 1 while the watcher reaches its Docker engine (src/health/); local servers: always 1. */
  reachable: ColumnType<number, number | undefined, number>;
  reachable_since: ColumnType<string | null, string | null | undefined, string | null>;
  failed_pings: ColumnType<number, number | undefined, number>;
}

export interface ErpServicesTable {
  id: string; team_id: string; server_id: string; parent_id: string | null; name: string;
  state: ServiceState; revision: number; port: number | null; pid: number | null;
  outgoing_smtp: string | null; mail_username: string | null; mail_password_hash: string | null;
  state_reason: string | null; created_at: string; updated_at: string; deleted_at: string | null;
  published_host: string | null;
  proxy_upstream: string | null;
  proxy_health_path: string | null;
  /** The app definition it runs; null: the server's image (today's demo path). */
  app: string | null;
  /** 1: the operator allowed a private relay (src/mail/outgoing-relay.ts); 0: checked at every start. */
  outgoing_smtp_allow_private: ColumnType<number, number | undefined, number>;
  /** What its API shows (src/health/): set by every state change, and by the watcher's checks in between. */
  health: ColumnType<ServiceHealth, ServiceHealth | undefined, ServiceHealth>;
  health_since: ColumnType<string | null, string | null | undefined, string | null>;
}

export type ServiceHealth = 'healthy' | 'unhealthy' | 'unknown';

export interface DockerServersTable {
  server_id: string; docker_host: string; image: string | null; created_at: string; memory_mb: number | null; cpu_millicores: number | null;
  base_domain: string | null; proxy_http_port: number | null; proxy_https_port: number | null;
  acme_account_key: string | null; tls_certificate: string | null; tls_key: string | null;
}

export type CertificateState = 'pending' | 'issued' | 'failed';

export interface ServiceDomainsTable {
  domain: string; service_id: string; kind: 'platform' | 'custom'; certificate_state: CertificateState;
  certificate_expires_at: string | null; certificate_reason: string | null; created_at: string; updated_at: string;
}

export interface DockerServicesTable {
  service_id: string; volume: string; mail_username: string | null; mail_password: string | null; updated_at: string;
  /** JSON: each image the app's definition names to the digest the service was made with (docker/service-images.ts). */
  image_digests: string | null;
}

/** A Docker server's login to an image registry; `password` sealed (docker/registry-credentials.ts). */
export interface RegistryCredentialsTable { server_id: string; registry: string; username: string; password: string; updated_at: string }

/** The relay login of a service's outgoing mail; `password` sealed (src/mail/outgoing-relay.ts). */
export interface OutgoingMailLoginsTable { service_id: string; username: string; password: string | null; updated_at: string }

export interface ServiceSecretsTable { service_id: string; name: string; sealed: string; created_at: string }

export interface AppDefinitionsTable { name: string; source: string; created_at: string; updated_at: string }

export interface ApiTokensTable {
  id: string; team_id: string; name: string; token_hash: string; token_prefix: string;
  token_last_four: string; source: TokenSource; assistant_name: string | null;
  created_by_user_id: string | null; created_at: string; expires_on: string | null;
  accepted_by: AcceptedBy; full_access: number; permissions: string;
  restrict_services: number; restrict_servers: number; revoked_at: string | null;
  replaced_by_token_id: string | null; last_used_at: string | null; last_used_channel: string | null;
  updated_at: string; needs_approval: string;
}

export interface ApiTokenServicesTable { token_id: string; service_id: string }
export interface ApiTokenServersTable { token_id: string; server_id: string }

export interface OperationsTable {
  id: string; team_id: string; kind: string; service_id: string | null; server_id: string | null;
  state: OperationState; reason: string | null; parameters: string; result: string | null;
  requested_by_token_id: string | null; requested_channel: string | null;
  idempotency_key: string | null; request_fingerprint: string | null;
  lease_owner: string | null; lease_expires_at: string | null;
  created_at: string; started_at: string | null; finished_at: string | null;
  decision_id: string | null;
  /** What each step did and how long it took, as JSON (src/engine/operation-steps.ts); absent on insert. */
  steps: ColumnType<string | null, string | null | undefined, string | null>;
  /** The member who asked in the panel (then no token did); absent on insert by a token. */
  requested_by_user_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface DecisionsTable {
  id: string; team_id: string; asked_by_token_id: string; asked_channel: string; service_id: string | null;
  operation_id: string | null; question: string; context: string | null; options: string | null;
  state: DecisionState; answer: string | null; answered_by_type: 'member' | 'token' | null;
  answered_by_id: string | null; answered_channel: string | null; answered_at: string | null;
  created_at: string; expires_at: string;
}

export interface DecisionRequestsTable {
  asked_by_token_id: string; idempotency_key: string; request_fingerprint: string; decision_id: string;
}

export interface OperationTransitionsTable {
  id: string; operation_id: string; state: string; reason: string | null; at: string;
  token_id: string | null; channel: string | null;
}

export interface BackupsTable {
  id: string; team_id: string; service_id: string; state: 'pending' | 'completed' | 'failed';
  kind: string; size_bytes: number | null; sha256: string | null; file_path: string | null;
  operation_id: string | null; reason: string | null; created_at: string; completed_at: string | null;
  /** Why the server's copy could not be read when last needed; null while not known to be gone. */
  server_copy_reason?: string | null;
  /** When a restore drill last proved it restores; why the last drill that did not failed (null once one passed). */
  verified_at?: string | null;
  verify_reason?: string | null;
}

export interface BackupDestinationsTable {
  id: string; team_id: string; endpoint: string; region: string; bucket: string; prefix: string;
  access_key_id: string; secret_access_key: string; allow_private: number; created_at: string; replaced_at: string | null;
}

export interface TeamBackupKeysTable { team_id: string; recipient: string; identity: string; created_at: string }

export type OffsiteCopyState = 'pending' | 'stored' | 'failed';

export interface BackupOffsiteCopiesTable {
  backup_id: string; team_id: string; service_id: string; destination_id: string; state: OffsiteCopyState;
  reason: string | null; object_key: string; size_bytes: number | null; attempts: number; next_attempt_at: string;
  lease_owner: string | null; lease_expires_at: string | null; created_at: string; stored_at: string | null;
}

export interface TeamRestoreDrillsTable { team_id: string; next_run_at: string; updated_at: string }

export type RestoreDrillState = 'queued' | 'running' | 'verified' | 'failed';

export interface RestoreDrillsTable {
  id: string; team_id: string; service_id: string; backup_id: string; throwaway_id: string; state: RestoreDrillState;
  reason: string | null; attempts: number; lease_owner: string | null; lease_expires_at: string | null; created_at: string; ended_at: string | null;
}

export interface CaughtEmailsTable {
  id: string; team_id: string; copy_id: string; message_id: string | null; sender: string | null;
  recipients: string; subject: string | null; text_body: string | null; html_body: string | null;
  attachments: string; raw_path: string; size_bytes: number; received_at: string;
  /** The raw message; null for an email an earlier version kept as the file `raw_path`. */
  raw_message: Buffer | null;
}

export interface WebhooksTable {
  id: string; team_id: string; url: string; description: string; event_types: string; secret: string;
  previous_secret: string | null; previous_secret_expires_at: string | null; allow_private: number;
  enabled: number; disabled_reason: string | null; failing_since: string | null; created_at: string;
}

export interface EventsTable {
  id: string; team_id: string; type: string; payload: string; created_at: string; dispatched_at: string | null;
}

export interface WebhookDeliveriesTable {
  id: string; webhook_id: string; event_id: string; state: 'pending' | 'delivered' | 'failed';
  attempts: number; next_attempt_at: string; last_status: number | null; last_duration_ms: number | null;
  last_response_excerpt: string | null; last_error: string | null; lease_owner: string | null;
  lease_expires_at: string | null; created_at: string; updated_at: string;
}

export interface PanelSessionsTable {
  id_hash: string; user_id: string; team_id: string | null; csrf_secret: string; created_at: string; expires_at: string;
}

export interface AuditLogTable {
  id: string; team_id: string | null; at: string; actor_type: 'token' | 'user' | 'operator' | 'anonymous';
  actor_id: string | null; channel: string; action: string; target_type: string | null;
  target_id: string | null; outcome: 'allowed' | 'denied' | 'failed'; code: string | null; detail: string | null;
}

export interface InvitationsTable {
  id_hash: string; team_id: string; email: string; role: Role; invited_by_user_id: string | null;
  created_at: string; expires_at: string; accepted_at: string | null;
}

export interface DownloadLinksTable {
  /** Who asked for it: a token, or a member in the panel (user_id, token_id null). */
  id_hash: string; team_id: string; token_id: string | null; user_id: ColumnType<string | null, string | null | undefined, string | null>; file: string; created_at: string; expires_at: string; used_at: string | null;
  /** What its use is recorded as (schema.sql). */
  action: string | null; target_type: string | null; target_id: string | null; channel: string | null;
}

/** src/oauth: the authorization server's records and our sign-in records (schema.sql). */
export interface OAuthRecordsTable {
  kind: string; id: string; payload: string; grant_id: string | null; user_code: string | null; uid: string | null;
  token_id: string | null; expires_at: string | null; consumed_at: string | null;
}

export interface TeamBackupRetentionTable {
  team_id: string; keep_manual: number | null; keep_safety: number | null;
}

export type BackupFrequency = 'off' | 'hourly' | 'daily';

export interface BackupScheduleFields {
  frequency: BackupFrequency; time_of_day: string; keep_daily: number; keep_weekly: number; keep_monthly: number;
}

export interface BackupSchedulesTable extends BackupScheduleFields {
  service_id: string; team_id: string; next_run_at: string | null; current_backup_id: string | null;
  attempts: number; retry_at: string | null; updated_at: string;
  /** Who last changed it (schema.sql); null while nobody has. */
  changed_by_type: ScheduleChanger['type'] | null; changed_by_id: string | null;
}

/** A token, or a member in the panel, who changed a backup schedule. */
export interface ScheduleChanger { type: 'token' | 'user'; id: string }

export interface TeamBackupScheduleDefaultsTable extends BackupScheduleFields {
  team_id: string;
}

export interface RowRetentionSettingsTable {
  name: string; days: number;
}

export interface MaintenanceLeasesTable {
  name: string; lease_owner: string; lease_expires_at: string;
}

/** The watcher's counts per service (src/health/service-checks.ts). */
export interface ServiceHealthChecksTable {
  service_id: string;
  failed_checks: number;
  first_failed_at: string | null; last_answer: string | null;
  restart_count: number | null;
  /** JSON array of ISO times: restarts seen within the crash-loop window. */
  restarts_seen: string;
  crash_loop_since: string | null;
}

export type IncidentKind = 'service_down' | 'crash_loop' | 'server_unreachable' | 'backup_failed' | 'certificate_failed';

export interface IncidentsTable {
  id: string; team_id: string; kind: IncidentKind; subject_type: 'service' | 'server'; subject_id: string; subject_name: string;
  started_at: string; ended_at: string | null;
}

export interface NotificationEmailsTable {
  id: string; team_id: string; incident_id: string; phase: 'start' | 'end'; recipient: string; what: string;
  state: 'pending' | 'sent' | 'failed'; attempts: number; next_attempt_at: string;
  lease_owner: string | null; lease_expires_at: string | null; last_error: string | null; created_at: string; sent_at: string | null;
}

export interface NotificationMailTable { id: string; relay_host: string; relay_port: number; from_address: string; updated_at: string }

export interface MemberNotificationsTable { team_id: string; user_id: string; kinds: string; updated_at: string }

export interface NodesTable {
  name: string; last_seen_at: string;
}

export interface SecretsKeyCheckTable {
  id: string; sealed: string;
}

/** Positions 1..100 in a name, and every three characters of each service's name (schema.sql). */
export interface NamePositionsTable { n: number }
export interface ServiceNameGramsTable { team_id: string; gram: string; service_id: string }

/** A service moved to another server, from its switch on (schema.sql, service_moves; src/engine/moves/). */
export interface ServiceMovesTable {
  id: string; team_id: string; service_id: string; operation_id: string; from_server_id: string; to_server_id: string;
  write_pause_ms: number; switched_at: string; rollback_until: string; state: 'kept' | 'rolled_back' | 'removed'; removed_at: string | null;
}

export interface Database {
  teams: TeamsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  servers: ServersTable;
  erp_services: ErpServicesTable;
  docker_servers: DockerServersTable;
  service_domains: ServiceDomainsTable;
  docker_services: DockerServicesTable;
  registry_credentials: RegistryCredentialsTable;
  app_definitions: AppDefinitionsTable;
  service_secrets: ServiceSecretsTable;
  outgoing_mail_logins: OutgoingMailLoginsTable;
  api_tokens: ApiTokensTable;
  api_token_services: ApiTokenServicesTable;
  api_token_servers: ApiTokenServersTable;
  operations: OperationsTable;
  decisions: DecisionsTable;
  decision_requests: DecisionRequestsTable;
  operation_transitions: OperationTransitionsTable;
  backups: BackupsTable;
  backup_destinations: BackupDestinationsTable;
  team_backup_keys: TeamBackupKeysTable;
  backup_offsite_copies: BackupOffsiteCopiesTable;
  team_restore_drills: TeamRestoreDrillsTable;
  restore_drills: RestoreDrillsTable;
  caught_emails: CaughtEmailsTable;
  webhooks: WebhooksTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  panel_sessions: PanelSessionsTable;
  audit_log: AuditLogTable;
  invitations: InvitationsTable;
  download_links: DownloadLinksTable;
  oauth_records: OAuthRecordsTable;
  secrets_key_check: SecretsKeyCheckTable;
  nodes: NodesTable;
  team_backup_retention: TeamBackupRetentionTable;
  backup_schedules: BackupSchedulesTable;
  team_backup_schedule_defaults: TeamBackupScheduleDefaultsTable;
  row_retention_settings: RowRetentionSettingsTable;
  maintenance_leases: MaintenanceLeasesTable;
  name_positions: NamePositionsTable;
  service_name_grams: ServiceNameGramsTable;
  service_health_checks: ServiceHealthChecksTable;
  incidents: IncidentsTable;
  notification_emails: NotificationEmailsTable;
  notification_mail: NotificationMailTable;
  member_notifications: MemberNotificationsTable;
  service_moves: ServiceMovesTable;
}
