// invoke(): THE authorization core. Every capability call, from every channel, passes here, in
// this order: token valid (401), channel accepted, plan includes the API, permission held,
// creation allowed (403), input valid (400), target reachable (404), the permission this input
// needs besides (403: a change that would destroy something, `destructiveWhen`), then run, then
// audit.
// Then one more step for a token that needs approval for the action: nothing runs; the action
// waits, as an operation awaiting approval, for a decision someone else answers. The core asks
// the hook it is given (deps.approvals, provided by src/decisions/approvals.ts) and knows nothing
// of decisions itself.
// One exception to "permission held": a token reads what it requested itself. A capability marked
// `readableByRequester` (the operations) lets a token without its permission through the
// permission step with its reach narrowed to its own requests; the reach step then answers 404
// for anything else, as for anything outside a token's reach.
// A member of the team signed in to the panel passes the same gate from the permission step on,
// with the permissions of their role (Credentials.member, src/panel/member-principal.ts); their
// actions and refusals are recorded with the member as the actor.
// Adapters hold no rules: they turn a request into (capability, raw input, credentials) and
// format what comes back.
import type { SecretBox } from '../secrets/secret-box.js';
import type { ServiceObserver } from './service-observer.js';
import type { z } from 'zod';
import { authenticate } from './authenticate.js';
import type { Db } from '../db/connect.js';
import type { AuditLog } from './audit.js';
import type { Actor, ApprovalHook, Capability, CallerAccess, CapabilityContext, FileSource } from './capability.js';
import { AppError, missingPermission, toAppError, type FieldError } from './errors.js';
import {
  accepts, holds, isMember, PLANS_WITH_API, type Caller, type Channel, type MemberPrincipal, type Principal, type Reach,
} from './principal.js';
import { resolveTarget } from './reach.js';

export interface CoreDeps {
  db: Db;
  audit: AuditLog;
  /** Told about failures that are ours (not the caller's), with their real cause. */
  onInternalError?: (error: AppError, capability: string) => void;
  /** Where this server is reached from outside, for links handed to clients (downloads). */
  publicUrl?: string;
  /** Opens sealed values a capability shows once (an app's initial credentials); absent, they are not shown. */
  secrets?: SecretBox;
  /** Asked whether a call waits for approval, and holds it when it does (src/decisions/approvals.ts). */
  approvals: ApprovalHook;
  /** Reads services' logs and metrics (src/engine/observe); absent, those capabilities answer that they cannot. */
  observer?: ServiceObserver;
}

export interface Credentials {
  bearer: string | undefined;
  channel: Channel;
  /** The client's Idempotency-Key, when the channel carries one (REST POSTs). */
  idempotencyKey?: string | undefined;
  /**
   * What admit() answered for this same bearer and channel earlier in this same request (the MCP
   * endpoint admits a request before reading its body): the token is then not looked up again.
   * Never carried from one request to the next, so an access change still applies to the next.
   */
  admitted?: Principal | undefined;
  /**
   * A member signed in to the panel (channel `panel`), built by the panel from their session and
   * role: no token is looked up, and admission (a token's channels, the plan's API) does not apply.
   */
  member?: MemberPrincipal | undefined;
}

const CHANNEL_NAMES: Record<Channel, string> = {
  api: 'the REST API and command line',
  mcp: 'the MCP server for AI assistants',
  panel: 'the panel',
};

const PLAN_NAMES: Record<string, string> = { free: 'Free', starter: 'Starter', business: 'Business', enterprise: 'Enterprise' };

/** Token valid, accepted by this channel, team plan includes the API. Audits a refusal. */
export async function admit(deps: CoreDeps, credentials: Credentials, action: string): Promise<Principal> {
  if (credentials.admitted) return credentials.admitted;
  let principal: Principal;
  try {
    principal = await authenticate(deps.db.kysely, credentials.bearer);
  } catch (thrown) {
    const error = toAppError(thrown);
    const known = thrown as { tokenId?: string; teamId?: string };
    deps.audit.record({
      team_id: known.teamId ?? null, actor_type: known.tokenId ? 'token' : 'anonymous', actor_id: known.tokenId ?? null,
      channel: credentials.channel, action, target_type: null, target_id: null, outcome: 'denied',
      code: error.code, detail: error.internalReason ?? null,
    });
    throw error;
  }
  const refusal = admissionRefusal(principal, credentials.channel);
  if (refusal) {
    denied(deps, principal, credentials.channel, action, refusal);
    throw refusal;
  }
  return principal;
}

/**
 * The admission step after the token itself: accepted by this channel, and the team's plan
 * includes the API. Exported for an approved action, which is carried out later for the token
 * that asked (src/decisions/approvals.ts) and must pass the same step as it stands then.
 */
export function admissionRefusal(principal: Principal, channel: Channel): AppError | undefined {
  if (!accepts(principal.acceptedBy, channel)) {
    const other: Channel = channel === 'api' ? 'mcp' : 'api';
    return new AppError(
      'channel_not_accepted',
      `This API token is accepted only by ${CHANNEL_NAMES[other]}, not by ${CHANNEL_NAMES[channel]}. ` +
        'An owner or admin can change "Accepted by" on the API Tokens page of the panel.',
    );
  }
  if (!PLANS_WITH_API.has(principal.plan)) {
    return new AppError(
      'plan_excludes_api',
      `Your team's plan (${PLAN_NAMES[principal.plan] ?? principal.plan}) does not include the API. ` +
        'The API is available on every plan from Starter upward; an owner can change the plan.',
    );
  }
  return undefined;
}

/** Whether a capability is worth showing to this caller (MCP tools/list, the panel's buttons). Not a gate: invoke() is. */
export function mayAttempt(principal: Caller, capability: Capability): boolean {
  if (capability.permission !== null && !holds(principal, capability.permission) && !capability.readableByRequester) return false;
  return creationRefusal(principal, capability) === undefined;
}

export async function invoke<C extends Capability>(
  capability: C,
  rawInput: unknown,
  credentials: Credentials,
  deps: CoreDeps,
): Promise<z.output<C['output']>> {
  return gateThen(capability, rawInput, credentials, deps, capability.run) as Promise<z.output<C['output']>>;
}

/**
 * The same gate as invoke(), for a capability's file (REST streams it): the bytes of a backup or
 * an email are never reachable by any other path than the one that checks the token.
 */
export async function invokeDownload(capability: Capability, rawInput: unknown, credentials: Credentials, deps: CoreDeps): Promise<FileSource> {
  const download = capability.download;
  if (!download) throw new AppError('not_found', `${capability.name} has no file to download.`);
  return gateThen(capability, rawInput, credentials, deps, download);
}

async function gateThen<T>(
  capability: Capability,
  rawInput: unknown,
  credentials: Credentials,
  deps: CoreDeps,
  perform: (input: Record<string, unknown>, context: CapabilityContext) => Promise<T>,
): Promise<T> {
  // Admitted earlier in the same request (the MCP endpoint): admit() would answer that very principal.
  const principal: Caller = credentials.member ?? credentials.admitted ?? await admit(deps, credentials, capability.name);
  const { channel } = credentials;
  const targetId = 'from' in capability.target ? rawTargetId(rawInput, capability.target.from) : null;
  try {
    const reach = permittedReach(principal, capability);
    const refusal = creationRefusal(principal, capability);
    if (refusal) throw refusal;
    const parsed = capability.input.safeParse(rawInput ?? {});
    if (!parsed.success) throw validationError(parsed.error);
    const input = parsed.data as Record<string, unknown>;
    const target = hasTarget(capability) ? await resolveTarget(deps.db, reach, capability.target, input) : undefined;
    const destructive = await destructiveInput(deps.db, principal, capability, input, target);
    const output = perform === capability.run && destructive !== false && !isMember(principal) && deps.approvals.waitsForApproval(principal, capability)
      ? await deps.approvals.hold(deps, { capability, principal, channel, input, target, idempotencyKey: credentials.idempotencyKey }) as T
      : await perform(input, {
        db: deps.db,
        reach,
        actor: actorOf(principal, channel),
        caller: isMember(principal) ? undefined : callerAccess(principal),
        target,
        idempotencyKey: credentials.idempotencyKey,
        publicUrl: deps.publicUrl,
        secrets: deps.secrets,
        approvals: deps.approvals,
        observer: deps.observer,
      });
    if (!isMember(principal)) deps.audit.tokenUsed(principal.tokenId, channel);
    // Reads only touch last-used; every action, and every read of what is most sensitive, gets its own row.
    if (!capability.hints.readOnly || recordsThisRead(capability, perform)) {
      deps.audit.record({
        team_id: principal.teamId, ...auditActor(principal), channel,
        action: capability.name, target_type: capability.target.kind, target_id: targetId,
        outcome: 'allowed', code: null, detail: null,
      });
    }
    return output;
  } catch (thrown) {
    const error = toAppError(thrown);
    if (error.code === 'internal') deps.onInternalError?.(error, capability.name);
    denied(deps, principal, channel, capability.name, error, capability.target.kind, targetId);
    throw error;
  }
}

/** A recorded read is recorded here unless it only issued a link (run() of a download): the link's use is (download-links.ts). */
function recordsThisRead(capability: Capability, perform: unknown): boolean {
  return capability.recordedRead === true && !(capability.download && perform === capability.run);
}

/** Whether the capability acts on one thing to resolve (resolveTarget answers undefined for the team and the caller). */
function hasTarget(capability: Capability): boolean {
  return capability.target.kind !== 'team' && capability.target.kind !== 'caller';
}

function denied(
  deps: CoreDeps, principal: Caller, channel: Channel, action: string, error: AppError,
  targetType: string | null = null, targetId: string | null = null,
): void {
  deps.audit.record({
    team_id: principal.teamId, ...auditActor(principal), channel, action,
    target_type: targetType, target_id: targetId, outcome: error.code === 'internal' ? 'failed' : 'denied',
    code: error.code, detail: error.internalReason ?? error.detail,
  });
}

/**
 * The permission step's refusal (403 missing_permission), if any. Exported for the MCP endpoint,
 * which asks it before a call to answer an assistant's sign-in with a step-up challenge; the
 * call itself still goes through invoke(), which asks it again.
 */
export function permissionRefusal(principal: Caller, capability: Capability): AppError | undefined {
  // Reading the calling token itself (permission null) is a token's; a member has none to read.
  if (capability.permission === null) {
    return isMember(principal) ? new AppError('not_found', 'A member in the panel calls with no API token: there is no calling token to read.') : undefined;
  }
  if (holds(principal, capability.permission) || (capability.readableByRequester && !isMember(principal))) return undefined;
  return isMember(principal) ? refusedToRole(principal, capability.permission) : missingPermission(capability.permission);
}

/** A member's refusal: the same code and `permission` member as a token's, in words about their role. */
function refusedToRole(member: MemberPrincipal, permission: string): AppError {
  const role = member.member.role;
  return new AppError('missing_permission',
    `As ${role === 'admin' ? 'an admin' : `a ${role}`} of ${member.teamName} you cannot do this: it needs ${permission}, which your role does not include. ` +
      'Ask an owner or admin (the permissions of each role are in docs/panel.md).', { permission });
}

/** Who an activity row names: the token, or the member. */
function auditActor(caller: Caller): { actor_type: 'token' | 'user'; actor_id: string } {
  return isMember(caller) ? { actor_type: 'user', actor_id: caller.member.userId } : { actor_type: 'token', actor_id: caller.tokenId };
}

function actorOf(caller: Caller, channel: Channel): Actor {
  return isMember(caller) ? { userId: caller.member.userId, channel: 'panel' } : { tokenId: caller.tokenId, channel };
}

/**
 * The permission step for what this input does: for a capability destructive only with some
 * inputs, whether this one is (true), after refusing it (403 naming the permission) to a token
 * without the permission it then needs; undefined for any other capability. Exported for an
 * approved action, carried out later (src/decisions/approvals.ts), which asks it again as things
 * stand then. The 403 sentence is the one of every missing permission.
 */
export async function destructiveInput(
  db: Db, principal: Caller, capability: Capability, input: Record<string, unknown>, target: Record<string, unknown> | undefined,
): Promise<boolean | undefined> {
  const when = capability.destructiveWhen;
  if (!when) return undefined;
  if (!(await when.applies(input, { db, target }))) return false;
  if (!holds(principal, when.permission)) throw isMember(principal) ? refusedToRole(principal, when.permission) : missingPermission(when.permission);
  return true;
}

/** The permission step: the token's reach, narrowed to its own requests where that is allowed; or 403. */
function permittedReach(principal: Caller, capability: Capability): Reach {
  const refusal = permissionRefusal(principal, capability);
  if (refusal) throw refusal;
  if (capability.permission === null || holds(principal, capability.permission)) return principal.reach;
  return { ...principal.reach, requestedOnly: true };
}

function creationRefusal(principal: Caller, capability: Capability): AppError | undefined {
  if (capability.creates === 'service' && principal.reach.restrictServices) {
    return new AppError('restricted_token_cannot_create',
      'This API token is limited to specific ERP services, so it cannot create new ERP services.');
  }
  if (capability.creates === 'server' && principal.reach.restrictServers) {
    return new AppError('restricted_token_cannot_create',
      'This API token is limited to specific servers, so it cannot create new servers.');
  }
  return undefined;
}

export function callerAccess(principal: Principal): CallerAccess {
  return {
    tokenId: principal.tokenId, tokenName: principal.tokenName, source: principal.source,
    teamId: principal.teamId, teamName: principal.teamName, plan: principal.plan,
    acceptedBy: principal.acceptedBy, expiresOn: principal.expiresOn, fullAccess: principal.fullAccess,
    permissions: [...principal.permissions],
  };
}

function rawTargetId(rawInput: unknown, field: string): string | null {
  const value = (rawInput as Record<string, unknown> | null | undefined)?.[field];
  return typeof value === 'string' ? value.slice(0, 100) : null;
}

function validationError(error: z.ZodError): AppError {
  const errors: FieldError[] = error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : fieldOfUnrecognized(issue),
    message: issue.message,
  }));
  const fields = [...new Set(errors.map((entry) => entry.field))].join(', ');
  return new AppError('validation_failed', `The request has invalid fields: ${fields}.`, { errors });
}

function fieldOfUnrecognized(issue: z.core.$ZodIssue): string {
  return issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '(body)';
}
