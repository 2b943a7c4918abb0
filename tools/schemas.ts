// Shapes shared by capabilities: ids, pagination, and the public views of each resource.
// Views list only what a client needs; internal columns (pids, paths, hashes) never appear.
// Each is a function that builds it on first use and then returns the same schema: a capability
// builds its schemas only when first read (src/core/capability.ts, CapabilitySpec), and these with them.
import { z } from 'zod';
import { builtOnce } from '../src/core/built-once.js';
import { PERMISSION_IDS } from '../src/auth/permissions.js';
import { multilineTextProblem, plainTextProblem } from '../src/core/plain-text.js';

const idOf = (prefix: string, what: string) =>
  // The pattern says what the id is; the field's name says whose (no description: it would repeat both).
  z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{20}$`), `Must be ${what} id (${prefix}_...).`);

export const ServiceId = builtOnce(() => idOf('svc', 'an ERP service'));
export const ServerId = builtOnce(() => idOf('srv', 'a server'));
export const BackupId = builtOnce(() => idOf('bak', 'a backup'));
export const OperationId = builtOnce(() => idOf('op', 'an operation'));
export const DecisionId = builtOnce(() => idOf('dec', 'a decision'));

/** Refuses control and text-direction characters (src/core/plain-text.ts), as the field's own issue. */
function refusePlainTextProblem(value: string, context: z.RefinementCtx<string>): void {
  const problem = plainTextProblem(value);
  if (problem) context.addIssue({ code: 'custom', message: `M${problem.slice(1)}` });
}

/** A name people give and read: 1 to 100 characters, without control or text-direction characters (src/core/plain-text.ts). */
export const DisplayName = builtOnce(() => z.string().trim().min(1).max(100).superRefine(refusePlainTextProblem));

/** One line kept as given, not trimmed (a relay's login, which another program reads): the same characters refused as in names. */
export const PlainLine = (max: number) => z.string().min(1).max(max).superRefine(refusePlainTextProblem);

/** Text people write over several lines (a decision's context or answer): line breaks and tabs allowed, other controls not. */
export const MultilineText = (max: number) => z.string().trim().min(1).max(max).superRefine((value, context) => {
  const problem = multilineTextProblem(value);
  if (problem) context.addIssue({ code: 'custom', message: `M${problem.slice(1)}` });
});

export const PageInput = builtOnce(() => ({
  // Bounds and default say it all; a cursor is the next_cursor of the page before, as its name says.
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
}));

/** The value a shared schema describes: `Infer<typeof ServiceView>`. */
export type Infer<Build extends () => z.ZodType> = z.infer<ReturnType<Build>>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().describe('Pass as cursor to get the next page; null on the last page.'),
  });

export const ServiceState = builtOnce(() => z.enum([
  'provisioning', 'stopped', 'starting', 'running', 'stopping', 'redeploying', 'restoring', 'failed', 'deleting',
]));

// unhealthy: it should run and does not (3 failed health checks in a row, or it failed); unknown:
// not meant to run now (docs/health.md). Said there and in the OpenAPI document's service view,
// not in every tool's schema (test/mcp/tool-list-size.test.ts).
export const ServiceHealth = builtOnce(() => z.enum(['healthy', 'unhealthy', 'unknown']));

export const ServiceView = builtOnce(() => z.object({
  id: ServiceId(),
  name: z.string(),
  server_id: ServerId(),
  parent_id: ServiceId().nullable().describe('For a copy, the ERP service it copies; null for an ERP service.'),
  is_copy: z.boolean(),
  state: ServiceState(),
  revision: z.number().int().describe('Deployed revision; redeploy increments it.'),
  url: z.string().nullable().describe('Where the running service answers; null when it has no address.'),
  health: ServiceHealth().describe('healthy: runs and answers its health check; unhealthy: should run and does not (3 failed checks in a row, ' +
    'or failed); unknown: not meant to run now.'),
  health_since: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}));

export const ServerView = builtOnce(() => z.object({
  id: ServerId(),
  name: z.string(),
  state: z.string(),
  capacity: z.number().int().describe('How many ERP services the server can host.'),
  reachable: z.boolean().describe('False once its engine failed 3 pings in a row.'),
  created_at: z.string(),
}));

export const BackupView = builtOnce(() => z.object({
  id: BackupId(),
  service_id: ServiceId(),
  state: z.enum(['pending', 'completed', 'failed']),
  kind: z.string().describe('manual, scheduled (by the backup schedule), or safety (taken automatically before a restore).'),
  size_bytes: z.number().int().nullable(),
  sha256: z.string().nullable(),
  reason: z.string().nullable().describe('Why the backup failed, when it did.'),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  locations: z.array(z.object({
    kind: z.enum(['server', 'offsite']),
    state: z.enum(['stored', 'pending', 'failed']),
    reason: z.string().nullable().describe('Why it is not stored there, in a sentence; null when stored.'),
  })).describe("Where the backup is kept: on its server, and off-site (encrypted, at the team's destination) when the team has one."),
  verified_at: z.string().nullable().describe('When a restore drill last proved that its off-site copy restores (restored into a throwaway service, ' +
    'started and health checked); null: never yet.'),
  verify_reason: z.string().nullable().describe('Why its last restore drill failed, in a sentence; null when none failed since one passed.'),
}));

export const OperationView = builtOnce(() => z.object({
  id: OperationId(),
  kind: z.string(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'awaiting_approval'])
    .describe('awaiting_approval: asked by a token that needs approval for this action; it runs only once decision_id is approved.'),
  reason: z.string().nullable().describe('Why the operation failed, when it did.'),
  service_id: ServiceId().nullable(),
  server_id: ServerId().nullable(),
  requested_channel: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  backup_id: BackupId().nullable()
    .describe('For a backup, the backup it writes (pending until the operation ends); for a restore, the backup it restores.'),
  decision_id: z.string().nullable()
    .describe('For an operation that needed approval, the decision that asks for it (GET /api/decisions/{decision_id}).'),
  result: z.object({
    initial_credentials: z.object({
      login: z.string(),
      password: z.string(),
      fields: z.record(z.string(), z.string()).optional()
        .describe('The other fields the first login needs, as the app definition states them (a company name); absent when it states none.'),
    }).optional()
      .describe('The admin login of the app a created service runs (tryton), shown once: in the first answer that shows the ' +
        'succeeded operation to the token that created the service (get_operation, or the MCP tool that waited for it), then ' +
        'erased. Never in list_operations. Keep it at once.'),
    initial_credentials_shown: z.string().optional()
      .describe('In place of initial_credentials once they were shown: when, and in which answer over which channel.'),
    safety_backup_id: BackupId().nullable().optional()
      .describe('For a restore, the safety backup holding the data it replaced (null when the service had no data yet).'),
    crash_loop: z.string().optional().describe('What it started then crashed in a loop: how, and since when (service.crash_loop).'),
    data_as_of: z.string().optional()
      .describe('For a recovery (recover_erp_service), the time of the data the service came back with: what was written after it was lost with its server.'),
    recovered_on_server_id: ServerId().optional().describe('For a recovery, the server the service now runs on.'),
    write_pause_ms: z.number().optional()
      .describe('For a move or its rollback, how long the service was not serving (stopped for the final snapshot, until it answered on its new server).'),
    rollback_until: z.string().optional()
      .describe('For a move, until when the server it left keeps it stopped with its data (rollback_erp_service_move); removed after.'),
    dns_change: z.string().optional()
      .describe('For a move of a service with domains of its team: the DNS records to change, in a sentence.'),
  }).nullable()
    .describe('What a succeeded operation gives back: for a restore, safety_backup_id (to every reader); for create_erp_service ' +
      'of an app with an admin login, initial_credentials once to the token that requested it, then initial_credentials_shown. ' +
      'null otherwise, and for every other reader.'),
}));

/** get_operation's view: the operation and what each of its steps did (src/engine/operation-steps.ts). */
export const OperationDetailView = builtOnce(() => OperationView().extend({
  steps: z.array(z.object({
    step: z.string(), at: z.string(), duration_ms: z.number(), outcome: z.enum(['done', 'failed']), detail: z.string().nullable(),
  })).describe('What each step did and how long it took, oldest first; empty until it runs.'),
}));

export const PermissionIdSchema = builtOnce(() => z.enum(PERMISSION_IDS as [string, ...string[]]));

export const EmailId = builtOnce(() => idOf('eml', 'a caught email'));

export const EmailSummaryView = builtOnce(() => z.object({
  id: EmailId(),
  copy_id: ServiceId(),
  message_id: z.string().nullable(),
  sender: z.string().nullable(),
  recipients: z.array(z.string()),
  subject: z.string().nullable(),
  size_bytes: z.number().int(),
  attachments: z.array(z.object({ filename: z.string().nullable(), content_type: z.string(), size_bytes: z.number().int() })),
  received_at: z.string(),
}));

export const EmailView = builtOnce(() => EmailSummaryView().extend({
  text_body: z.string().nullable(),
  html_body: z.string().nullable().describe('As sent; render it sandboxed, never inline.'),
}));

export const DecisionView = builtOnce(() => z.object({
  id: DecisionId(),
  state: z.enum(['pending', 'answered', 'expired', 'cancelled']),
  question: z.string(),
  context: z.string().nullable(),
  options: z.array(z.string()).nullable().describe('The answers offered; null when the answer is free text.'),
  answer: z.string().nullable().describe('The answer, once answered.'),
  service_id: ServiceId().nullable().describe('The ERP service the decision is about, if any.'),
  operation_id: OperationId().nullable()
    .describe('For an approval: the operation awaiting it ("approve" queues it, "deny" fails it).'),
  asked_by: z.object({ token_id: z.string(), channel: z.string() }),
  answered_by: z.object({ type: z.enum(['member', 'token']), id: z.string(), channel: z.string() }).nullable(),
  answered_at: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
}));

export const TokenId = builtOnce(() => idOf('tok', 'an API token'));

/**
 * Whether a date or time in Instant's form names a moment that exists, from 1970 on. Date.parse
 * alone is no check: it reads "2026-02-30" as 2 March (it refuses an hour, minute or offset out
 * of range, and a month or day past 31, itself).
 */
function onTheCalendar(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  const ms = Date.parse(value);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && ms >= 0 && ms < 4e12;
}

/** True for a value that reads as a time (it starts with a date): the logs' `since` is a time then, a cursor otherwise. */
export function startsWithDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}/.test(value);
}

const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An instant given by a client: ISO 8601 with its offset, or a date (that day's midnight, UTC),
 * that exists on the calendar. Every time a client gives is read through this one schema.
 */
export const Instant = builtOnce(() => z.string().max(40)
  .regex(INSTANT, 'Must be a date (2026-01-31) or a time with its offset (2026-01-31T09:00:00Z).')
  .refine((value) => !INSTANT.test(value) || onTheCalendar(value), 'Must be a date and time that exist (such as 2026-02-28, not 2026-02-30).'));

export const ActivityView = builtOnce(() => z.object({
  id: z.string(),
  at: z.string(),
  token: z.object({ id: TokenId(), name: z.string().nullable(), source: z.string().nullable() }).nullable()
    .describe('The token that acted; null for a person in the panel or the operator. On channel schedule: who last changed the schedule.'),
  member: z.object({ id: z.string(), email: z.string().nullable() }).nullable()
    .describe('The person who acted in the panel. On channel schedule: who last changed the schedule.'),
  channel: z.enum(['rest', 'mcp', 'panel', 'cli', 'schedule', 'retention', 'health'])
    .describe('rest includes the command line; cli is the operator on the server; schedule: a backup schedule removed a backup; ' +
      'retention: backup retention did; health: the health watcher saw a service or server fail or recover (its event\'s type as action).'),
  action: z.string().describe('A tool name, or a panel action such as create_token.'),
  target: z.object({ type: z.string(), id: z.string() }).nullable(),
  outcome: z.enum(['allowed', 'denied', 'failed']),
  code: z.string().nullable().describe('The error code of a refusal or failure.'),
}));

// keep_daily, keep_weekly, keep_monthly: how many scheduled backups of each are kept, as their names say.
const KeepCount = (least: number) => z.number().int().min(least).max(1000);

/** A backup schedule as set (PUT) and shown (GET); `time` is in the team's time zone. */
export const BackupScheduleFields = builtOnce(() => ({
  frequency: z.enum(['off', 'hourly', 'daily']).describe('hourly: at time\'s minutes past each hour.'),
  time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'Must be a time of day, HH:MM (00:00 to 23:59).')
    .describe('HH:MM in the team\'s time zone.'),
  keep_daily: KeepCount(1),
  keep_weekly: KeepCount(0),
  keep_monthly: KeepCount(0),
}));

export const BackupScheduleView = builtOnce(() => z.object({
  service_id: ServiceId(),
  ...BackupScheduleFields(),
  next_run_at: z.string().nullable().describe('Next scheduled backup (UTC); null when off.'),
}));

export const LogsInput = builtOnce(() => ({
  service_id: ServiceId(),
  tail: z.coerce.number().int().min(1).max(5000).default(200),
  // What starts with a date is a time, checked as every time is (Instant); anything else is a cursor (log-cursor.ts checks it).
  since: z.string().max(100).superRefine((value, context) => {
    if (!startsWithDate(value)) return;
    for (const issue of Instant().safeParse(value).error?.issues ?? []) context.addIssue({ code: 'custom', message: issue.message });
  }).optional()
    .describe('An ISO 8601 time or a next_cursor: the lines after it.'),
}));

export const LogPageView = builtOnce(() => z.object({
  lines: z.array(z.object({
    container: z.string().nullable().describe('Which container wrote it (Docker); null on a local server.'),
    at: z.string().nullable(),
    text: z.string().describe('Control characters escaped (\\x1b); a long line is cut and says so.'),
  })),
  next_cursor: z.string().describe('Pass as since to read the lines written after these.'),
  more: z.boolean().describe('More lines wait after these: read on now.'),
}));

export const MetricsView = builtOnce(() => z.object({
  state: ServiceState(),
  running: z.boolean().describe('Whether the engine sees it run now.'),
  started_at: z.string().nullable(),
  uptime_seconds: z.number().nullable(),
  restarts: z.number().nullable().describe('Restarts by the engine since the last start.'),
  cpu: z.object({ percent: z.number(), window_seconds: z.number() }).nullable()
    .describe('Percent of one core over the last window_seconds (up to 60); null when not running.'),
  memory_bytes: z.number().nullable(),
  memory_limit_bytes: z.number().nullable(),
  data_bytes: z.number().nullable().describe('Size of its data on disk.'),
}));

/** A production service's outgoing mail relay as shown: never its password, only whether one is kept. */
export const OutgoingMailView = builtOnce(() => z.object({
  service_id: ServiceId(),
  relay: z.object({
    host: z.string(),
    port: z.number().int(),
    user: z.string().nullable(),
    password_set: z.boolean().describe('Whether a password is kept for the relay (sealed; it is never shown again).'),
  }).nullable().describe('null: the service sends no email.'),
}));

export const DomainView = builtOnce(() => z.object({
  domain: z.string().describe('The name in its ASCII (IDNA) form.'),
  certificate: z.object({
    state: z.enum(['pending', 'issued', 'failed']).describe('pending until the certificate authority decided; issued; failed (reason says what to fix).'),
    expires_at: z.string().nullable().describe('When the issued certificate expires; it is renewed before.'),
    reason: z.string().nullable().describe('Why the certificate could not be obtained, when it failed.'),
  }),
}));

export const ServiceDetailView = builtOnce(() => ServiceView().extend({
  domains: z.array(DomainView()).describe("The names it answers at over HTTPS: its platform name first, then its team's domains."),
}));

export const ServiceDomainsView = builtOnce(() => z.object({ service_id: ServiceId(), domains: z.array(DomainView()) }));

/** A domain name as a team gives it (any script; checked and turned into ASCII by the capability). */
export const DomainName = builtOnce(() => z.string().min(1).max(253).describe('e.g. erp.example.com; no wildcard.'));
