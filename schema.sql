-- teaminfra: the one schema. Portable SQL: runs unchanged on SQLite and PostgreSQL.
-- Applied at every start; every statement is idempotent (IF NOT EXISTS), so a second start
-- on the same data changes nothing and loses nothing.
-- Conventions: ids are prefixed, time-sortable TEXT; times are ISO-8601 UTC TEXT; booleans
-- are INTEGER 0/1; JSON is TEXT. These types mean the same thing in both engines.

CREATE TABLE IF NOT EXISTS teams (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  plan        TEXT NOT NULL CHECK (plan IN ('free', 'starter', 'business', 'enterprise')),
  timezone    TEXT NOT NULL DEFAULT 'UTC',
  created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS users (
  id             TEXT PRIMARY KEY,
  email          TEXT NOT NULL UNIQUE,
  password_hash  TEXT,
  created_at     TEXT NOT NULL,
  last_sign_in_at TEXT
);

CREATE TABLE IF NOT EXISTS memberships (
  team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role        TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at  TEXT NOT NULL,
  -- A removed member keeps the row so that "created by" can still name them.
  removed_at  TEXT,
  PRIMARY KEY (team_id, user_id)
);

CREATE TABLE IF NOT EXISTS servers (
  id          TEXT PRIMARY KEY,
  team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  -- The node that hosts the server's services (scale-out); NULL means any single node.
  node        TEXT,
  root_dir    TEXT,
  capacity    INTEGER NOT NULL DEFAULT 20,
  state       TEXT NOT NULL DEFAULT 'ready',
  created_at  TEXT NOT NULL,
  deleted_at  TEXT
);
CREATE INDEX IF NOT EXISTS servers_team ON servers (team_id, id);

-- ERP services and their copies: a copy is a service with a parent.
CREATE TABLE IF NOT EXISTS erp_services (
  id          TEXT PRIMARY KEY,
  team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  server_id   TEXT NOT NULL REFERENCES servers (id),
  parent_id   TEXT REFERENCES erp_services (id),
  name        TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('provisioning', 'stopped', 'starting', 'running', 'stopping',
                                             'redeploying', 'restoring', 'failed', 'deleting')),
  revision    INTEGER NOT NULL DEFAULT 1,
  port        INTEGER,
  pid         INTEGER,
  outgoing_smtp TEXT,
  mail_username TEXT,
  mail_password_hash TEXT,
  state_reason TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  deleted_at  TEXT
);
CREATE INDEX IF NOT EXISTS erp_services_team ON erp_services (team_id, id);
-- A service's copies in id order, read by key (the copies list pages through them without a sort).
-- Replaces erp_services_parent (parent_id alone), which this index also serves.
CREATE INDEX IF NOT EXISTS erp_services_parent_id ON erp_services (parent_id, id);
-- The Overview's count of services in each state, read from this index alone (issue 28).
CREATE INDEX IF NOT EXISTS erp_services_team_state ON erp_services (team_id, deleted_at, state);
-- A search by name (Overview, token forms) reads this index alone in id order, stopping at a full
-- page: no row of the table is read for a service whose name does not match (issue 28).
CREATE INDEX IF NOT EXISTS erp_services_team_names ON erp_services (team_id, id, parent_id, deleted_at, name);
DROP INDEX IF EXISTS erp_services_parent;

-- Where a running service is reached: the host of its server's Docker engine (NULL: this
-- machine, 127.0.0.1, as for the local driver). Added after the first release.
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS published_host TEXT;
-- A service its server's proxy serves (src/engine/docker/proxy): where the proxy sends its
-- requests (its web container on the proxy's network, `name:port`) and the path the proxy checks
-- its health at. Its url is then https://published_host (its first name) on the proxy's HTTPS
-- port. NULL: served by its own front or as a local process, at http://published_host:port.
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS proxy_upstream TEXT;
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS proxy_health_path TEXT;

-- The app definition the service runs (src/engine/apps): a bundled name (demo, tryton) or one
-- the operator added. NULL: the server's own image, as before apps existed (the demo path).
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS app TEXT;

-- 1: the operator allowed outgoing_smtp to be a private or loopback address (set-outgoing-mail
-- --allow-private, or TEAMINFRA_SMTP_RELAY_ALLOW_PRIVATE=1 when it was set). Without it, the
-- relay's name is resolved and checked again at every start and redeploy (src/mail/relay-address.ts).
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS outgoing_smtp_allow_private INTEGER NOT NULL DEFAULT 0;

-- Servers that are Docker engines (src/engine/docker): their services are containers there.
-- A server without a row here runs its services as local processes (the embedded default).
CREATE TABLE IF NOT EXISTS docker_servers (
  server_id   TEXT PRIMARY KEY REFERENCES servers (id),
  -- unix:///var/run/docker.sock, tcp://host:2376 (TLS) or ssh://user@host
  docker_host TEXT NOT NULL,
  -- The image its services run; NULL: the bundled ERP image, built on the engine when missing.
  image       TEXT,
  created_at  TEXT NOT NULL
);
-- Each ERP container's limits on this server (admin set-server-limits); NULL: the default
-- (TEAMINFRA_CONTAINER_MEMORY_MB, TEAMINFRA_CONTAINER_CPUS; src/engine/docker/container-limits.ts).
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS memory_mb INTEGER;
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS cpu_millicores INTEGER;

-- A Docker server's proxy (src/engine/docker/proxy): the base domain its services' platform
-- names are made under (admin set-server-domain; NULL: none yet), and the host ports it is
-- published on (admin set-server-proxy; NULL: 80 and 443).
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS base_domain TEXT;
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS proxy_http_port INTEGER;
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS proxy_https_port INTEGER;
-- The key of the ACME account its proxy gets certificates with (registered by teaminfra,
-- src/engine/docker/proxy/acme-account.ts), and a certificate the operator gave the server
-- instead (admin set-server-certificate; PEM): both keys sealed with the secrets key.
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS acme_account_key TEXT;
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS tls_certificate TEXT;
ALTER TABLE docker_servers ADD COLUMN IF NOT EXISTS tls_key TEXT;

-- The names a service answers at over HTTPS (src/engine/domains): its platform name
-- (<slug>.<base domain>, kind 'platform', one per service, kept across stop, start, redeploy and
-- restore) and the domains its team added (kind 'custom'). A name belongs to one service of the
-- whole installation: the primary key is the ASCII (IDNA) form in lower case. The certificate
-- state is what the ACME CA decided, as the proxy reports it: pending, issued (until
-- certificate_expires_at) or failed (certificate_reason says what to fix).
CREATE TABLE IF NOT EXISTS service_domains (
  domain      TEXT PRIMARY KEY,
  service_id  TEXT NOT NULL REFERENCES erp_services (id),
  kind        TEXT NOT NULL CHECK (kind IN ('platform', 'custom')),
  certificate_state TEXT NOT NULL DEFAULT 'pending' CHECK (certificate_state IN ('pending', 'issued', 'failed')),
  certificate_expires_at TEXT,
  certificate_reason TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS service_domains_service ON service_domains (service_id, kind, domain);

-- What the Docker driver keeps about a service: the named volume that holds its data now (a
-- restore swaps in another one), and a copy's login to the mail catcher, handed to its
-- containers (the catcher keeps only a hash of it); the password is sealed with the secrets key.
CREATE TABLE IF NOT EXISTS docker_services (
  service_id    TEXT PRIMARY KEY REFERENCES erp_services (id),
  volume        TEXT NOT NULL,
  mail_username TEXT,
  mail_password TEXT,
  updated_at    TEXT NOT NULL
);
-- The exact images an app's service was made with (src/engine/docker/service-images.ts): JSON,
-- each image its definition names (`registry/team/erp:1`) to the digest it was pulled as
-- (`registry/team/erp@sha256:...`), so that its copies, restores and later starts on another
-- engine run that image; a redeploy pulls the names again and records the new digests. NULL or
-- absent for an image that came from no registry (built offline): it runs by its name.
ALTER TABLE docker_services ADD COLUMN IF NOT EXISTS image_digests TEXT;

-- The login a Docker server's engine gives a registry when it pulls an image an app definition
-- names (teaminfra admin set-registry-credentials): one per server and registry (HOST[:PORT] in
-- lower case; docker.io for Docker Hub). The password is sealed with the secrets key and bound to
-- its server and registry; it is opened only to go with a pull to that server's engine, and is
-- never shown, logged or quoted in a reason.
CREATE TABLE IF NOT EXISTS registry_credentials (
  server_id   TEXT NOT NULL REFERENCES servers (id),
  registry    TEXT NOT NULL,
  username    TEXT NOT NULL,
  password    TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (server_id, registry)
);

-- App definitions the operator added (teaminfra admin add-app; src/engine/apps): the Compose
-- file as given, parsed again whenever it is read, so what runs always follows the code's
-- rules. The bundled ones (demo, tryton) ship as files and have no row. No team token writes here.
-- Secrets generated per service for its app definition (x-teaminfra secrets: the database
-- password, the app's admin password), each sealed with the secrets key and bound to its service
-- and name; unsealed only to fill a container's environment. Deleted with the service's containers.
CREATE TABLE IF NOT EXISTS service_secrets (
  service_id  TEXT NOT NULL REFERENCES erp_services (id),
  name        TEXT NOT NULL,
  sealed      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (service_id, name)
);

-- The login a production service gives its outgoing mail relay (set_outgoing_mail; the relay's
-- host:port is erp_services.outgoing_smtp). The password is sealed with the secrets key and bound
-- to the service, opened only to fill in the service's environment at its next start or redeploy,
-- and never shown. A copy has none: its mail always goes to its mail catcher.
CREATE TABLE IF NOT EXISTS outgoing_mail_logins (
  service_id  TEXT PRIMARY KEY REFERENCES erp_services (id),
  username    TEXT NOT NULL,
  password    TEXT,
  updated_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS app_definitions (
  name        TEXT PRIMARY KEY,
  source      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS api_tokens (
  id                 TEXT PRIMARY KEY,
  team_id            TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  name               TEXT NOT NULL,
  -- SHA-256 of the value, hex. The value itself is never stored.
  token_hash         TEXT NOT NULL UNIQUE,
  token_prefix       TEXT NOT NULL,
  token_last_four    TEXT NOT NULL,
  source             TEXT NOT NULL CHECK (source IN ('panel', 'cli', 'assistant', 'legacy')),
  assistant_name     TEXT,
  created_by_user_id TEXT REFERENCES users (id),
  created_at         TEXT NOT NULL,
  -- The token works until the end of this day (YYYY-MM-DD) in the team's time zone; NULL: never expires.
  expires_on         TEXT,
  accepted_by        TEXT NOT NULL CHECK (accepted_by IN ('api', 'mcp', 'both')),
  full_access        INTEGER NOT NULL,
  -- Comma-separated permission identifiers as chosen; implications are applied when checking.
  permissions        TEXT NOT NULL DEFAULT '',
  -- Restriction flags are separate from the lists: a restricted token whose services were all
  -- deleted reaches nothing, not everything.
  restrict_services  INTEGER NOT NULL DEFAULT 0,
  restrict_servers   INTEGER NOT NULL DEFAULT 0,
  revoked_at         TEXT,
  replaced_by_token_id TEXT,
  last_used_at       TEXT,
  last_used_channel  TEXT,
  updated_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS api_tokens_team ON api_tokens (team_id, id);
-- Comma-separated capability names this token may only ask for: each waits for a decision
-- (approve or deny) answered by someone else (src/decisions/approvals.ts).
ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS needs_approval TEXT NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS api_token_services (
  token_id    TEXT NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  service_id  TEXT NOT NULL REFERENCES erp_services (id) ON DELETE CASCADE,
  PRIMARY KEY (token_id, service_id)
);

CREATE TABLE IF NOT EXISTS api_token_servers (
  token_id    TEXT NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  server_id   TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  PRIMARY KEY (token_id, server_id)
);

-- Long actions (start, stop, redeploy, create, delete, backup, restore, copy) as a queue
-- taken by workers with a lease.
CREATE TABLE IF NOT EXISTS operations (
  id                 TEXT PRIMARY KEY,
  team_id            TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  kind               TEXT NOT NULL,
  service_id         TEXT REFERENCES erp_services (id),
  server_id          TEXT REFERENCES servers (id),
  -- awaiting_approval: asked for by a token that needs approval for it; nothing runs until a
  -- decision approves it (then queued) or denies it (then failed). Widened on databases made
  -- before it existed by src/db/upgrade-schema.ts.
  state              TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'awaiting_approval')),
  reason             TEXT,
  parameters         TEXT NOT NULL DEFAULT '{}',
  result             TEXT,
  requested_by_token_id TEXT REFERENCES api_tokens (id),
  requested_channel  TEXT,
  idempotency_key    TEXT,
  request_fingerprint TEXT,
  lease_owner        TEXT,
  lease_expires_at   TEXT,
  created_at         TEXT NOT NULL,
  started_at         TEXT,
  finished_at        TEXT
);
CREATE INDEX IF NOT EXISTS operations_team ON operations (team_id, id);
-- A token's own requests, and the operations about no service or about the services a token
-- reaches, each read as a range in id order whatever the size of the team (issue 28).
CREATE INDEX IF NOT EXISTS operations_requester ON operations (team_id, requested_by_token_id, id);
CREATE INDEX IF NOT EXISTS operations_team_service ON operations (team_id, service_id, id);
CREATE INDEX IF NOT EXISTS operations_queue ON operations (state, lease_expires_at);
CREATE UNIQUE INDEX IF NOT EXISTS operations_idempotency ON operations (requested_by_token_id, idempotency_key);
-- The decision that approves (or denies) an operation awaiting approval.
ALTER TABLE operations ADD COLUMN IF NOT EXISTS decision_id TEXT;
-- What each step of the operation did and how long it took (JSON, bounded: src/engine/operation-steps.ts).
ALTER TABLE operations ADD COLUMN IF NOT EXISTS steps TEXT;
-- The member who asked for it in the panel (requested_by_token_id is then null): the one shown
-- a created service's initial credentials.
ALTER TABLE operations ADD COLUMN IF NOT EXISTS requested_by_user_id TEXT REFERENCES users (id);

-- Every state change of an operation, with when and who asked.
CREATE TABLE IF NOT EXISTS operation_transitions (
  id            TEXT PRIMARY KEY,
  operation_id  TEXT NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
  state         TEXT NOT NULL,
  reason        TEXT,
  at            TEXT NOT NULL,
  token_id      TEXT,
  channel       TEXT
);
CREATE INDEX IF NOT EXISTS operation_transitions_operation ON operation_transitions (operation_id, at);

CREATE TABLE IF NOT EXISTS backups (
  id            TEXT PRIMARY KEY,
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  service_id    TEXT NOT NULL REFERENCES erp_services (id),
  state         TEXT NOT NULL CHECK (state IN ('pending', 'completed', 'failed')),
  kind          TEXT NOT NULL DEFAULT 'manual',
  -- BIGINT: PostgreSQL's INTEGER stops at 2 GiB; on SQLite both are the same 64-bit integer.
  size_bytes    BIGINT,
  sha256        TEXT,
  file_path     TEXT,
  operation_id  TEXT REFERENCES operations (id),
  reason        TEXT,
  created_at    TEXT NOT NULL,
  completed_at  TEXT
);
CREATE INDEX IF NOT EXISTS backups_service ON backups (service_id, id);
-- Why the server's copy of a completed backup could not be read when it was last needed (its
-- volume or server gone); null while it is not known to be gone. A restore then reads the
-- off-site copy (src/offsite/restorable-backup.ts).
ALTER TABLE backups ADD COLUMN IF NOT EXISTS server_copy_reason TEXT;

-- A team's off-site backup destination (src/offsite): S3-compatible object storage. Set only by
-- owners and admins in the panel (Developer > Backups) and by the operator (teaminfra admin
-- set-backup-destination); no token reads or writes it. The secret access key is sealed with the
-- secrets key, bound to this row. A destination replaced by another keeps its row (replaced_at)
-- while off-site copies stored there remain, so that they can still be read and removed.
CREATE TABLE IF NOT EXISTS backup_destinations (
  id                 TEXT PRIMARY KEY,
  team_id            TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  endpoint           TEXT NOT NULL,
  region             TEXT NOT NULL,
  bucket             TEXT NOT NULL,
  prefix             TEXT NOT NULL DEFAULT '',
  access_key_id      TEXT NOT NULL,
  secret_access_key  TEXT NOT NULL,
  allow_private      INTEGER NOT NULL DEFAULT 0,
  created_at         TEXT NOT NULL,
  replaced_at        TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS backup_destinations_current ON backup_destinations (team_id) WHERE replaced_at IS NULL;

-- Each team's backup key (age, X25519), made with its first destination and shown once to the
-- member (or operator) who set it: every off-site copy is encrypted to `recipient`; `identity`,
-- sealed with the secrets key and bound to the team, opens them for a restore from off-site.
CREATE TABLE IF NOT EXISTS team_backup_keys (
  team_id     TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
  recipient   TEXT NOT NULL,
  identity    TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

-- The off-site copy of a completed backup, queued in the transaction that completes it when its
-- team has a destination: pending (uploaded by one node at a time, under a lease, retried with
-- back-off), stored once the store confirmed the whole object, or failed with the reason. It
-- outlives its backup's row on purpose: once retention removed the backup, its object is deleted
-- from the store and then this row (src/offsite/offsite-pruning.ts).
CREATE TABLE IF NOT EXISTS backup_offsite_copies (
  backup_id        TEXT PRIMARY KEY,
  team_id          TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  service_id       TEXT NOT NULL,
  destination_id   TEXT NOT NULL REFERENCES backup_destinations (id),
  state            TEXT NOT NULL CHECK (state IN ('pending', 'stored', 'failed')),
  reason           TEXT,
  object_key       TEXT NOT NULL,
  -- The encrypted object's size, as the store confirmed it.
  size_bytes       BIGINT,
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT NOT NULL,
  lease_owner      TEXT,
  lease_expires_at TEXT,
  created_at       TEXT NOT NULL,
  stored_at        TEXT
);
CREATE INDEX IF NOT EXISTS backup_offsite_copies_due ON backup_offsite_copies (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS backup_offsite_copies_team ON backup_offsite_copies (team_id, service_id);

-- Restore drills (src/offsite/restore-drills/): the proof that a backup restores. Each team with
-- a destination has a slot (next_run_at, weekly), taken by one node with a compare-and-set by the
-- backup scheduler, which queues one drill per service of the team: its newest backup stored
-- off-site is fetched from the store, restored into a throwaway service on the same server
-- (throwaway_id: an erp_services row born deleted, so that no list, watcher or quota sees it),
-- started, health checked and removed. One node runs each drill under a lease; a drill whose
-- node died is taken again, its throwaway removed first.
CREATE TABLE IF NOT EXISTS team_restore_drills (
  team_id       TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
  next_run_at   TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS restore_drills (
  id            TEXT PRIMARY KEY,
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  service_id    TEXT NOT NULL,
  backup_id     TEXT NOT NULL,
  throwaway_id  TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'verified', 'failed')),
  reason        TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0,
  lease_owner   TEXT,
  lease_expires_at TEXT,
  created_at    TEXT NOT NULL,
  ended_at      TEXT
);
CREATE INDEX IF NOT EXISTS restore_drills_due ON restore_drills (state, created_at);
CREATE INDEX IF NOT EXISTS restore_drills_service ON restore_drills (service_id, created_at);
-- When a restore drill last proved the backup restores, and why the last one that did not failed
-- (null once one passed): get_backup and the service's page say it.
ALTER TABLE backups ADD COLUMN IF NOT EXISTS verified_at TEXT;
ALTER TABLE backups ADD COLUMN IF NOT EXISTS verify_reason TEXT;

-- Emails kept by a copy's mail catcher. Only copies have one.
CREATE TABLE IF NOT EXISTS caught_emails (
  id            TEXT PRIMARY KEY,
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  copy_id       TEXT NOT NULL REFERENCES erp_services (id) ON DELETE CASCADE,
  message_id    TEXT,
  sender        TEXT,
  recipients    TEXT NOT NULL DEFAULT '[]',
  subject       TEXT,
  text_body     TEXT,
  html_body     TEXT,
  attachments   TEXT NOT NULL DEFAULT '[]',
  raw_path      TEXT NOT NULL,
  size_bytes    INTEGER NOT NULL,
  received_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS caught_emails_copy ON caught_emails (copy_id, id);
-- The raw message itself, so that any node sharing the database serves it (BYTEA: a blob on
-- SQLite too). raw_path is the file of an email kept by an earlier version, '' for one kept here.
ALTER TABLE caught_emails ADD COLUMN IF NOT EXISTS raw_message BYTEA;

CREATE TABLE IF NOT EXISTS webhooks (
  id                 TEXT PRIMARY KEY,
  team_id            TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  url                TEXT NOT NULL,
  description        TEXT NOT NULL DEFAULT '',
  event_types        TEXT NOT NULL DEFAULT '*',
  -- Signing needs the secret itself; it is shown to the team once. Both secrets are sealed with
  -- the secrets key, which is not in the database (src/secrets).
  secret             TEXT NOT NULL,
  previous_secret    TEXT,
  previous_secret_expires_at TEXT,
  allow_private      INTEGER NOT NULL DEFAULT 0,
  enabled            INTEGER NOT NULL DEFAULT 1,
  disabled_reason    TEXT,
  failing_since      TEXT,
  created_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_team ON webhooks (team_id, id);

-- Decisions: a question a token (a coding agent) asks the team, answered by a member in the
-- panel or by another token, or expired. Also the approvals of operations awaiting approval
-- (operation_id set, options approve/deny).
CREATE TABLE IF NOT EXISTS decisions (
  id                 TEXT PRIMARY KEY,
  team_id            TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  asked_by_token_id  TEXT NOT NULL REFERENCES api_tokens (id),
  asked_channel      TEXT NOT NULL,
  service_id         TEXT REFERENCES erp_services (id),
  operation_id       TEXT REFERENCES operations (id),
  question           TEXT NOT NULL,
  context            TEXT,
  -- JSON array of 2 to 10 options; NULL: the answer is free text.
  options            TEXT,
  state              TEXT NOT NULL CHECK (state IN ('pending', 'answered', 'expired', 'cancelled')),
  answer             TEXT,
  answered_by_type   TEXT CHECK (answered_by_type IN ('member', 'token')),
  answered_by_id     TEXT,
  answered_channel   TEXT,
  answered_at        TEXT,
  created_at         TEXT NOT NULL,
  expires_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_team ON decisions (team_id, id);
-- The sweeper's overdue pending decisions (every team); a team's pending ones (panel, overview count).
CREATE INDEX IF NOT EXISTS decisions_pending ON decisions (state, expires_at);
CREATE INDEX IF NOT EXISTS decisions_team_state ON decisions (team_id, state, expires_at);
-- For a token limited to services: the decisions it asked, and those about no service or about
-- the services it reaches, each a range in id order (src/db/repositories/reach-ranges.ts).
CREATE INDEX IF NOT EXISTS decisions_asker ON decisions (team_id, asked_by_token_id, id);
CREATE INDEX IF NOT EXISTS decisions_team_service ON decisions (team_id, service_id, id);
-- The Idempotency-Key a token sent with a decision it asked (POST /api/decisions), so that a
-- retry with the same key and question returns that decision instead of asking a second one.
CREATE TABLE IF NOT EXISTS decision_requests (
  asked_by_token_id   TEXT NOT NULL REFERENCES api_tokens (id),
  idempotency_key     TEXT NOT NULL,
  request_fingerprint TEXT NOT NULL,
  decision_id         TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
  PRIMARY KEY (asked_by_token_id, idempotency_key)
);

-- The events outbox: written in the same transaction as the change that caused the event.
CREATE TABLE IF NOT EXISTS events (
  id          TEXT PRIMARY KEY,
  team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  type        TEXT NOT NULL,
  payload     TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  dispatched_at TEXT
);
CREATE INDEX IF NOT EXISTS events_undispatched ON events (dispatched_at, id);
CREATE INDEX IF NOT EXISTS events_team ON events (team_id, id);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id                 TEXT PRIMARY KEY,
  webhook_id         TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id           TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  state              TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts           INTEGER NOT NULL DEFAULT 0,
  next_attempt_at    TEXT NOT NULL,
  last_status        INTEGER,
  last_duration_ms   INTEGER,
  last_response_excerpt TEXT,
  last_error         TEXT,
  lease_owner        TEXT,
  lease_expires_at   TEXT,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id);

CREATE TABLE IF NOT EXISTS panel_sessions (
  -- SHA-256 of the cookie value, hex.
  id_hash     TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id     TEXT REFERENCES teams (id) ON DELETE CASCADE,
  csrf_secret TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS panel_sessions_user ON panel_sessions (user_id);

-- Every action and every denial: who (token or user), through which channel, what, outcome.
CREATE TABLE IF NOT EXISTS audit_log (
  id           TEXT PRIMARY KEY,
  team_id      TEXT,
  at           TEXT NOT NULL,
  actor_type   TEXT NOT NULL CHECK (actor_type IN ('token', 'user', 'operator', 'anonymous')),
  actor_id     TEXT,
  channel      TEXT NOT NULL,
  action       TEXT NOT NULL,
  target_type  TEXT,
  target_id    TEXT,
  outcome      TEXT NOT NULL CHECK (outcome IN ('allowed', 'denied', 'failed')),
  code         TEXT,
  detail       TEXT
);
-- The activity trail (src/db/repositories/activity.ts) reads the team's rows newest first, by id
-- (ids start with their time), in one range per page: the team's, a token's, a target's, an
-- action's or an outcome's. The first index, on (team_id, at), served no query and is dropped.
DROP INDEX IF EXISTS audit_log_team;
CREATE INDEX IF NOT EXISTS audit_log_team_id ON audit_log (team_id, id);
CREATE INDEX IF NOT EXISTS audit_log_actor ON audit_log (team_id, actor_id, id);
CREATE INDEX IF NOT EXISTS audit_log_target ON audit_log (team_id, target_type, target_id, id);
CREATE INDEX IF NOT EXISTS audit_log_action ON audit_log (team_id, action, id);
CREATE INDEX IF NOT EXISTS audit_log_outcome ON audit_log (team_id, outcome, id);

-- Invitations to join a team: the link carries a random value; only its SHA-256 is kept.
CREATE TABLE IF NOT EXISTS invitations (
  id_hash            TEXT PRIMARY KEY,
  team_id            TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  email              TEXT NOT NULL,
  role               TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  invited_by_user_id TEXT REFERENCES users (id),
  created_at         TEXT NOT NULL,
  expires_at         TEXT NOT NULL,
  accepted_at        TEXT
);
CREATE INDEX IF NOT EXISTS invitations_team ON invitations (team_id, created_at);

-- Short-lived links to a file (a backup, a raw email), each good for one download, for channels
-- that cannot stream bytes (MCP, and the panel's Download buttons). Issued only after the
-- authorization core allowed the download, to a token, or to a member in the panel (user_id;
-- token_id null: made nullable on databases made before by src/db/upgrade-schema.ts).
-- used_at: the first GET, which moves expires_at to the end of the resume window; a link whose
-- whole file was delivered gets expires_at = that moment (src/db/repositories/download-links.ts).
CREATE TABLE IF NOT EXISTS download_links (
  id_hash      TEXT PRIMARY KEY,
  team_id      TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  token_id     TEXT REFERENCES api_tokens (id) ON DELETE CASCADE,
  file         TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  used_at      TEXT
);
-- What the link's first GET is recorded as in the activity trail (src/http/download-links.ts):
-- the tool that issued it, what it reads, and the channel it was asked on. Null on a link issued
-- by an earlier version (recorded with what the row has).
ALTER TABLE download_links ADD COLUMN IF NOT EXISTS action TEXT;
ALTER TABLE download_links ADD COLUMN IF NOT EXISTS target_type TEXT;
ALTER TABLE download_links ADD COLUMN IF NOT EXISTS target_id TEXT;
ALTER TABLE download_links ADD COLUMN IF NOT EXISTS channel TEXT;
ALTER TABLE download_links ADD COLUMN IF NOT EXISTS user_id TEXT REFERENCES users (id) ON DELETE CASCADE;

-- OAuth sign-in (src/oauth): what the authorization server keeps (registered clients, grants,
-- codes, refresh tokens, interactions, its signing and cookie keys) and our sign-in records,
-- which tie an OAuth grant to the team token it issued. A record whose id is a bearer secret
-- (codes, tokens, sessions) is kept under the SHA-256 of that value, never the value itself.
CREATE TABLE IF NOT EXISTS oauth_records (
  kind         TEXT NOT NULL,
  id           TEXT NOT NULL,
  -- JSON.
  payload      TEXT NOT NULL,
  grant_id     TEXT,
  -- SHA-256 of a device flow's user code, for the code-entry page's lookup.
  user_code    TEXT,
  uid          TEXT,
  -- The team token (api_tokens.id) a sign-in issued.
  token_id     TEXT,
  expires_at   TEXT,
  consumed_at  TEXT,
  PRIMARY KEY (kind, id)
);
CREATE INDEX IF NOT EXISTS oauth_records_grant ON oauth_records (grant_id);
CREATE INDEX IF NOT EXISTS oauth_records_user_code ON oauth_records (user_code);
CREATE INDEX IF NOT EXISTS oauth_records_uid ON oauth_records (uid);
CREATE INDEX IF NOT EXISTS oauth_records_token ON oauth_records (token_id);
CREATE INDEX IF NOT EXISTS oauth_records_expiry ON oauth_records (expires_at);

-- Which key seals the secrets kept here (src/secrets): a known value sealed with it, so that a
-- process given another key refuses to start rather than fail at its first webhook delivery.
CREATE TABLE IF NOT EXISTS secrets_key_check (
  id      TEXT PRIMARY KEY,
  sealed  TEXT NOT NULL
);

-- When each node (src/engine/node-name.ts) was last seen running its engine: operations queued
-- for a node not seen for TEAMINFRA_NODE_GONE_MS are failed by another node (src/engine/node-heartbeat.ts).
CREATE TABLE IF NOT EXISTS nodes (
  name          TEXT PRIMARY KEY,
  last_seen_at  TEXT NOT NULL
);

-- A team's own backup retention, set by the operator (teaminfra admin set-backup-retention);
-- a null column, or no row, takes the operator's default (src/engine/backup-retention.ts).
CREATE TABLE IF NOT EXISTS team_backup_retention (
  team_id       TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
  keep_manual   INTEGER,
  keep_safety   INTEGER
);

-- Each service's backup schedule (src/engine/backup-schedule/): off, hourly or daily at a time of
-- day in the team's time zone, with grandfather-father-son retention of its scheduled backups.
-- A service without a row follows its team's default (team_backup_schedule_defaults, or daily
-- 7/4/6 when none; copies: off); the scheduler writes the row when it first looks at the service.
-- next_run_at is the slot to take next: a node takes a slot by moving next_run_at past now in
-- the transaction that queues the backup, only if it still holds the value it read, so one node
-- takes each slot, and slots missed while every node was down collapse into one.
CREATE TABLE IF NOT EXISTS backup_schedules (
  service_id    TEXT PRIMARY KEY REFERENCES erp_services (id),
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  frequency     TEXT NOT NULL CHECK (frequency IN ('off', 'hourly', 'daily')),
  time_of_day   TEXT NOT NULL,
  keep_daily    INTEGER NOT NULL,
  keep_weekly   INTEGER NOT NULL,
  keep_monthly  INTEGER NOT NULL,
  next_run_at   TEXT,
  -- The backup of the slot last taken, and how many times that slot was tried (bounded retries).
  current_backup_id TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0,
  retry_at      TEXT,
  updated_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS backup_schedules_due ON backup_schedules (next_run_at);
CREATE INDEX IF NOT EXISTS backup_schedules_retry ON backup_schedules (retry_at);
-- Who last changed the schedule: 'token' or 'user' (a member in the panel) and their id; null
-- while nobody has since the scheduler wrote it. The activity trail names them beside the
-- schedule for each backup its retention removes (src/engine/backup-removal-entry.ts).
ALTER TABLE backup_schedules ADD COLUMN IF NOT EXISTS changed_by_type TEXT;
ALTER TABLE backup_schedules ADD COLUMN IF NOT EXISTS changed_by_id TEXT;

-- A team's default schedule for its new services (teaminfra admin set-backup-schedule-default).
CREATE TABLE IF NOT EXISTS team_backup_schedule_defaults (
  team_id       TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
  frequency     TEXT NOT NULL CHECK (frequency IN ('off', 'hourly', 'daily')),
  time_of_day   TEXT NOT NULL,
  keep_daily    INTEGER NOT NULL,
  keep_weekly   INTEGER NOT NULL,
  keep_monthly  INTEGER NOT NULL
);

-- How long the control plane keeps its own rows (src/engine/row-retention/), in days, as the
-- operator set it with teaminfra admin set-row-retention; no row: the environment, or the default.
CREATE TABLE IF NOT EXISTS row_retention_settings (
  name          TEXT PRIMARY KEY,
  days          INTEGER NOT NULL
);

-- Work that one node at a time does (pruning rows): held by a lease, taken over once it expires.
CREATE TABLE IF NOT EXISTS maintenance_leases (
  name          TEXT PRIMARY KEY,
  lease_owner   TEXT NOT NULL,
  lease_expires_at TEXT NOT NULL
);

-- The ranges row retention deletes from, oldest first, each read from an index.
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_ended ON webhook_deliveries (state, updated_at);
CREATE INDEX IF NOT EXISTS operations_finished ON operations (finished_at);
-- A service's scheduled backups, newest first, for the schedule's retention and its page.
CREATE INDEX IF NOT EXISTS backups_service_kind ON backups (service_id, kind, created_at);
-- Whether a delivery, a backup or a decision still names an event or an operation, read by key.
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX IF NOT EXISTS backups_operation ON backups (operation_id);
CREATE INDEX IF NOT EXISTS decisions_operation ON decisions (operation_id);

-- The search of services by part of a name (src/db/repositories/service-name-search.ts): every
-- three characters of each name, lowered, so that a search starts from the team's rarest of its
-- own three-character pieces instead of walking all the team's names. Written in SQL, by the
-- database's own lower() and substr(), so that a search's pieces are cut and lowered the same way.
-- name_positions holds 1..100, the bound of a name (tools/schemas.ts, DisplayName).
CREATE TABLE IF NOT EXISTS name_positions (n INTEGER PRIMARY KEY);
WITH RECURSIVE counted (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counted WHERE n < 100)
INSERT INTO name_positions (n) SELECT n FROM counted WHERE true ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS service_name_grams (
  team_id       TEXT NOT NULL,
  gram          TEXT NOT NULL,
  service_id    TEXT NOT NULL REFERENCES erp_services (id) ON DELETE CASCADE,
  PRIMARY KEY (team_id, gram, service_id)
);
CREATE INDEX IF NOT EXISTS service_name_grams_service ON service_name_grams (service_id);
-- The pieces of services made before this table existed. A service inserted by hand (not by
-- insertService) gets its pieces only when these statements run again: at every start on
-- PostgreSQL, but on SQLite only at a start that finds another schema.sql's fingerprint
-- (src/db/apply-schema.ts); until then a search of three characters or more does not find it.
-- indexServiceNames() with no ids writes them at once.
INSERT INTO service_name_grams (team_id, gram, service_id)
SELECT s.team_id, lower(substr(s.name, p.n, 3)), s.id FROM erp_services s JOIN name_positions p ON p.n <= length(s.name) - 2
WHERE NOT EXISTS (SELECT 1 FROM service_name_grams g WHERE g.service_id = s.id) ON CONFLICT DO NOTHING;

-- Health, watched between operations (src/health/): a service's health as its API shows it
-- (healthy, unhealthy, unknown) and since when. A change of state sets it (running: healthy, the
-- start waited for its health check; failed: unhealthy; any other: unknown); the watcher sets it
-- from its checks in between. Written only when it changes, so the index costs nothing per check.
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS health TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE erp_services ADD COLUMN IF NOT EXISTS health_since TEXT;
-- list_erp_services?health=unhealthy and the Overview's unhealthy services: one range of this index.
CREATE INDEX IF NOT EXISTS erp_services_team_health ON erp_services (team_id, health, id);
-- Whether the watcher reaches a server's Docker engine (local servers: always), since when, and
-- the failed pings in a row that count towards server.unreachable.
ALTER TABLE servers ADD COLUMN IF NOT EXISTS reachable INTEGER NOT NULL DEFAULT 1;
ALTER TABLE servers ADD COLUMN IF NOT EXISTS reachable_since TEXT;
ALTER TABLE servers ADD COLUMN IF NOT EXISTS failed_pings INTEGER NOT NULL DEFAULT 0;

-- The watcher's own counts per service, kept across nodes (a node that takes the watch over goes
-- on from them): failed checks in a row and the last answer; the engine's restart count last
-- read and the times restarts were seen within the crash-loop window (JSON array of ISO times);
-- since when a crash loop is open. A row exists only once something was counted.
CREATE TABLE IF NOT EXISTS service_health_checks (
  service_id       TEXT PRIMARY KEY REFERENCES erp_services (id),
  failed_checks    INTEGER NOT NULL DEFAULT 0,
  first_failed_at  TEXT,
  last_answer      TEXT,
  restart_count    INTEGER,
  restarts_seen    TEXT NOT NULL DEFAULT '[]',
  crash_loop_since TEXT
);

-- Incidents: what the team is emailed about, one email when it starts and one when it ends. A
-- subject (a service or a server) starts at most one incident of a kind an hour, so a service that
-- flaps mails twice an hour at most (its events still go out). kind: service_down, crash_loop,
-- server_unreachable, backup_failed (which starts and ends at once: one email), certificate_failed.
CREATE TABLE IF NOT EXISTS incidents (
  id            TEXT PRIMARY KEY,
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  kind          TEXT NOT NULL,
  subject_type  TEXT NOT NULL CHECK (subject_type IN ('service', 'server')),
  subject_id    TEXT NOT NULL,
  subject_name  TEXT NOT NULL,
  started_at    TEXT NOT NULL,
  ended_at      TEXT
);
CREATE INDEX IF NOT EXISTS incidents_subject ON incidents (subject_id, kind, started_at);

-- Emails about incidents, written in the transaction that starts or ends the incident, one per
-- recipient, and sent by the watcher through the installation's relay; taken with a lease, so one
-- node sends each. The text is made when it is sent (it holds the panel's address).
CREATE TABLE IF NOT EXISTS notification_emails (
  id            TEXT PRIMARY KEY,
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  incident_id   TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  phase         TEXT NOT NULL CHECK (phase IN ('start', 'end')),
  recipient     TEXT NOT NULL,
  what          TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
  attempts      INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner   TEXT,
  lease_expires_at TEXT,
  last_error    TEXT,
  created_at    TEXT NOT NULL,
  sent_at       TEXT
);
CREATE INDEX IF NOT EXISTS notification_emails_due ON notification_emails (state, next_attempt_at);

-- The installation's outgoing relay for these emails (teaminfra admin set-notification-mail): one
-- row, id 'relay'. No row: no email is written.
CREATE TABLE IF NOT EXISTS notification_mail (
  id            TEXT PRIMARY KEY,
  relay_host    TEXT NOT NULL,
  relay_port    INTEGER NOT NULL,
  from_address  TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

-- Which kinds of incident each owner or admin is emailed about, chosen on the panel: a
-- comma-separated list of kinds. No row: the defaults (src/health/notification-kinds.ts).
CREATE TABLE IF NOT EXISTS member_notifications (
  team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kinds         TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  PRIMARY KEY (team_id, user_id)
);

-- A service moved to another server (move_erp_service), from the switch on: the server it left
-- keeps the stopped service and its data until rollback_until, for rollback_erp_service_move.
-- state: kept (the left server still holds them), rolled_back (moved back by the rollback; the
-- server it had moved to holds what the rollback left), removed (what was left is gone). A
-- sweep (src/engine/moves/left-data-sweep.ts) removes what a move or rollback left, once the
-- window ended or right after a rollback.
CREATE TABLE IF NOT EXISTS service_moves (
  id              TEXT PRIMARY KEY,
  team_id         TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  service_id      TEXT NOT NULL REFERENCES erp_services (id),
  operation_id    TEXT NOT NULL,
  from_server_id  TEXT NOT NULL REFERENCES servers (id),
  to_server_id    TEXT NOT NULL REFERENCES servers (id),
  write_pause_ms  INTEGER NOT NULL,
  switched_at     TEXT NOT NULL,
  rollback_until  TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('kept', 'rolled_back', 'removed')),
  removed_at      TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS service_moves_operation ON service_moves (operation_id);
CREATE INDEX IF NOT EXISTS service_moves_service ON service_moves (service_id, switched_at);
CREATE INDEX IF NOT EXISTS service_moves_left ON service_moves (state, rollback_until);
