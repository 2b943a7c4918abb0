// The shape of one capability. Each file under tools/ calls defineCapability() once; the REST
// adapter, the MCP adapter and the OpenAPI document are all projections of this one object.
import type { SecretBox } from '../secrets/secret-box.js';
import { builtOnce } from './built-once.js';
import type { AuditLog } from './audit.js';
import type { ServiceObserver } from './service-observer.js';
import type { z } from 'zod';
import type { PermissionId } from '../auth/permissions.js';
import type { Db } from '../db/connect.js';
import { AppError, type ErrorCode } from './errors.js';
import type { Channel, Principal, Reach } from './principal.js';
import type { AcceptedBy } from '../db/tables.js';
import type { OperationKind } from '../db/repositories/operations.js';

/**
 * What a capability touches, declared so that invoke() can check reach before run():
 * - `team`: the caller's team as a whole (lists, which filter by reach in SQL);
 * - `service` | `server` | `backup` | `operation` | `email` | `decision`: one thing named by an input field;
 * - `caller`: the calling token itself, read-only.
 * With `optional`, a request without the field targets nothing; with it, the thing must be reachable.
 */
export type TargetSpec =
  | { kind: 'team' }
  | { kind: 'caller' }
  | { kind: 'service' | 'server' | 'backup' | 'operation' | 'email' | 'decision'; from: string; optional?: true };

export interface Hints {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

export interface HttpBinding {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path; every {param} must be a field of the input. */
  path: string;
  status: number;
  /**
   * A POST that honours Idempotency-Key (a retry with the same key and body answers what the first
   * one made); every 202 action does, through the operations queue.
   */
  idempotencyKey?: boolean;
  /** For download capabilities: the media type(s) of the file REST answers with. */
  produces?: string | readonly string[];
}

/** What the calling token may do, for capabilities that describe it (GET /api/token). */
export interface CallerAccess {
  tokenId: string;
  tokenName: string;
  source: string;
  teamId: string;
  teamName: string;
  plan: string;
  acceptedBy: AcceptedBy;
  expiresOn: string | null;
  fullAccess: boolean;
  permissions: readonly PermissionId[];
}

/** Who a call acts for: a token (REST, MCP), or a member signed in to the panel (MemberPrincipal). */
export type Actor =
  | { tokenId: string; userId?: undefined; channel: Channel }
  | { userId: string; tokenId?: undefined; channel: 'panel' };

/**
 * The token a call acts for, for what only a token does (asking and cancelling a decision, which
 * name the token that asked); a member in the panel is told so.
 */
export function actingToken(actor: Actor, what: string): string {
  if (actor.tokenId !== undefined) return actor.tokenId;
  throw new AppError('conflict', `${what} is done with an API token, not by a member in the panel.`);
}

/** Everything a handler gets. Never the token: only what it may reach and who to record. */
export interface CapabilityContext {
  db: Db;
  reach: Reach;
  /** For recording who asked (operations, audit); an id, never a value. */
  actor: Actor;
  /** The calling token's settings (GET /api/token); absent for a member in the panel, who calls with no token. */
  caller: CallerAccess | undefined;
  /** The row invoke() found while checking reach, when the target names one thing. */
  target: Record<string, unknown> | undefined;
  /** A retry with the same key must return the same result (see the operations queue). */
  idempotencyKey: string | undefined;
  /** Base URL for links handed to clients; undefined when unknown (stdio), then links are paths. */
  publicUrl: string | undefined;
  /**
   * Set when this run carries out an operation that waited for approval and was approved: the
   * operation already exists (awaiting_approval) and is queued in place instead of inserted.
   */
  approvedOperationId?: string;
  /** Opens the sealed initial credentials of a service for the token that created it, once (tools/operations/operation-answer.ts); absent without a key. */
  secrets?: SecretBox;
  /** The approval hook invoke() was given, for capabilities that answer decisions (an approval ends: the action is settled). */
  approvals: ApprovalHook;
  /** Reads a service's logs and metrics from its engine; absent where no engine is reachable. */
  observer?: ServiceObserver;
}

/** A file a capability offers for download: REST streams it (with Range), MCP gets a link. */
export interface FileSource {
  /**
   * Where the bytes are, said so that any node can find them (a download link made on one node
   * may be fetched through another): a file path (a local service's backup, or an email kept by
   * an earlier version), `docker://...` (a backup kept on a Docker engine), or
   * `caught-email:ID` (a raw message kept in the database). src/http/file-contents.ts reads them.
   */
  path: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  /** Hex SHA-256 of the whole file, sent as Repr-Digest when known. */
  sha256: string | null;
}

/** Everything a capability declares but its schemas; CapabilityDefinition and CapabilitySpec differ only in how those are given. */
interface CapabilityFields<Input extends z.ZodObject, Output extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  /** The permission required; `null` only for reading the calling token itself. */
  permission: PermissionId | null;
  target: TargetSpec;
  /** A capability that creates a service or server is refused to a token restricted to those. */
  creates?: 'service' | 'server';
  /**
   * A token always reads what it requested itself: a token without `permission` may still call
   * this capability, and then reaches only the operations it requested (invoke() narrows its
   * reach), so the Location of a 202 it received can always be polled.
   */
  readableByRequester?: true;
  /**
   * A read sensitive enough to be recorded as an action is (a whole database, an email that may
   * hold a reset link): each allowed call gets its own row in the activity trail, where other
   * reads only mark the token as used. A file handed out as a link (over MCP) is recorded when
   * the link is used (src/http/download-links.ts), not when it is issued: that is when it is read.
   */
  recordedRead?: true;
  /**
   * An action that a token can be set to need approval for ("Needs approval for" on the API
   * Tokens page): such a token's call queues nothing and waits, as an operation of kind `queues`
   * in state awaiting_approval, for a decision someone else answers (src/decisions/approvals.ts).
   * An action answered at once (200) names the kind of the operation that waits instead
   * (`heldAs`): held, it answers 202 with that operation; approved, run() does the action and
   * ends the operation itself (CapabilityContext.approvedOperationId).
   */
  approvable?: { queues: OperationKind } | { heldAs: HeldOnlyKind };
  /**
   * For an action that destroys something only with some inputs (set_backup_schedule: lowering
   * retention so that existing backups would be removed). invoke() asks `applies` once the input
   * is valid and its target resolved (whether anything would be lost depends on what exists
   * now): when it does, the call needs `permission` besides the capability's own (403 naming
   * it), and only then waits for approval where the token needs it. Otherwise the call is an
   * ordinary one of the capability's own permission.
   */
  destructiveWhen?: {
    permission: PermissionId;
    applies(input: z.output<Input>, context: { db: Db; target: Record<string, unknown> | undefined }): Promise<boolean>;
  };
  http: HttpBinding;
  hints: Hints;
  errors: readonly ErrorCode[];
  run(input: z.output<Input>, context: CapabilityContext): Promise<z.input<Output>>;
  /**
   * For download capabilities: the file itself, behind the same gate as run(). REST answers
   * with its bytes; `run` describes it (with a short-lived link) for channels that cannot stream.
   */
  download?(input: z.output<Input>, context: CapabilityContext): Promise<FileSource>;
}

/** The kind of an operation that exists only to wait for approval of an action answered at once. */
export type HeldOnlyKind = 'set_backup_schedule';

/** A capability as the adapters, the OpenAPI document and invoke() read it. */
export interface CapabilityDefinition<Input extends z.ZodObject, Output extends z.ZodType> extends CapabilityFields<Input, Output> {
  /** Built on its first read, then the same object (see CapabilitySpec). */
  readonly input: Input;
  readonly output: Output;
}

/**
 * What a file under tools/ gives defineCapability(): its schemas as functions that build them.
 * `teaminfra mcp` starts for every conversation and answers tools/list from what the build
 * computed (src/mcp/prebuilt-tools.ts), so building every capability's zod schemas when the
 * catalog loads was time spent before its first answer for nothing (src/mcp/README.md, "Stdio
 * start"); a schema is built when something first reads it (a call's validation, the OpenAPI
 * document, the tool definitions), once.
 */
export interface CapabilitySpec<Input extends z.ZodObject, Output extends z.ZodType> extends CapabilityFields<Input, Output> {
  input: () => Input;
  output: () => Output;
}

export type Capability = CapabilityDefinition<z.ZodObject, z.ZodType>;

/** Names and paths that belong to token management, which exists only in the panel. */
const TOKEN_MANAGEMENT = /token/i;

export class CatalogError extends Error {}

/**
 * The rules that read only the declaration are checked here, when the catalog loads; the one that
 * reads the input's fields, when the input is first built. Every schema of the catalog is built by
 * the build itself (scripts/bundle-mcp.mjs computes the MCP tools), by `teaminfra serve` as it
 * starts (the OpenAPI document) and by test/tools/catalog.test.ts, so a capability breaking it
 * still never ships.
 */
export function defineCapability<Input extends z.ZodObject, Output extends z.ZodType>(
  spec: CapabilitySpec<Input, Output>,
): CapabilityDefinition<Input, Output> {
  assertNotTokenManagement(spec);
  assertRequesterReadsOnlyOperations(spec);
  assertApprovableQueuesAnOperation(spec);
  assertDestructiveWhenIsDestructive(spec);
  const { input, output, ...fields } = spec;
  const definition = Object.defineProperties(fields, {
    input: { enumerable: true, get: builtOnce(() => assertPathParamsInInput(spec, input())) },
    output: { enumerable: true, get: builtOnce(output) },
  }) as CapabilityDefinition<Input, Output>;
  return Object.freeze(definition);
}

/**
 * Only an action on one thing can wait for approval, as an operation: one answered 202 queues
 * it; one answered at once names the kind of operation that waits (`heldAs`).
 */
function assertApprovableQueuesAnOperation(definition: CapabilityFields<z.ZodObject, z.ZodType>): void {
  if (!definition.approvable) return;
  const queues = 'queues' in definition.approvable;
  if (definition.hints.readOnly || (definition.http.status === 202) !== queues || !('from' in definition.target)) {
    throw new CatalogError(`Capability ${definition.name}: only an action on one thing that queues an operation can need approval.`);
  }
}

/** An action destructive with some inputs says so in its hints: an assistant's client may ask before calling it. */
function assertDestructiveWhenIsDestructive(definition: CapabilityFields<z.ZodObject, z.ZodType>): void {
  if (definition.destructiveWhen && (definition.hints.readOnly || !definition.hints.destructive)) {
    throw new CatalogError(`Capability ${definition.name}: an action destructive with some inputs has the destructive hint.`);
  }
}

/** Whether a call of the capability can answer 202 with an operation: one that queues it, or one held for approval. */
export function answersWithOperation(capability: Pick<Capability, 'http' | 'approvable'>): boolean {
  return capability.http.status === 202 || capability.approvable !== undefined;
}

/**
 * Only the operations' queries narrow to what a token requested (`Reach.requestedOnly`); any
 * other capability would ignore that narrowing and show everything the token's team reaches.
 */
function assertRequesterReadsOnlyOperations(definition: CapabilityFields<z.ZodObject, z.ZodType>): void {
  if (!definition.readableByRequester) return;
  if (!definition.hints.readOnly || !/^\/api\/operations(\/|$)/.test(definition.http.path)) {
    throw new CatalogError(`Capability ${definition.name}: only reading operations is open to the token that requested them.`);
  }
}

/**
 * The spec forbids managing tokens through the API or MCP. The one token-shaped capability
 * allowed is a read-only look at the caller itself; anything else is refused at load time.
 */
function assertNotTokenManagement(definition: CapabilityFields<z.ZodObject, z.ZodType>): void {
  const mentionsTokens = TOKEN_MANAGEMENT.test(definition.name) || TOKEN_MANAGEMENT.test(definition.http.path);
  if (!mentionsTokens) return;
  const selfInspection = definition.target.kind === 'caller' && definition.hints.readOnly && definition.http.method === 'GET';
  if (!selfInspection) {
    throw new CatalogError(
      `Capability ${definition.name} manages tokens; tokens are managed only on the API Tokens page of the panel.`,
    );
  }
}

/** Returns the input it checked. */
function assertPathParamsInInput<Input extends z.ZodObject>(definition: CapabilityFields<z.ZodObject, z.ZodType>, input: Input): Input {
  for (const match of definition.http.path.matchAll(/\{([^}]+)\}/g)) {
    const param = match[1] as string;
    if (!(param in input.shape)) {
      throw new CatalogError(`Capability ${definition.name}: path parameter {${param}} is not a field of its input.`);
    }
  }
  const target = definition.target;
  if ('from' in target && !(target.from in input.shape)) {
    throw new CatalogError(`Capability ${definition.name}: target field ${target.from} is not a field of its input.`);
  }
  return input;
}

// The one question the core asks about approval, through a hook it is given (CoreDeps.approvals):
// does this call wait for someone else's approval instead of running now? src/decisions/ answers
// it and holds the action (src/decisions/approvals.ts), so the core depends on nothing above it.
// Here beside the capability, since a capability's context hands the hook on.

/** A call that passed every check of invoke() and now waits instead of running. */
export interface ActionToHold {
  capability: Capability;
  principal: Principal;
  channel: Channel;
  input: Record<string, unknown>;
  target: Record<string, unknown> | undefined;
  idempotencyKey: string | undefined;
}

/** What holding and settling an action need: the database, and where failures and links go. */
export interface ApprovalDeps {
  db: Db;
  publicUrl?: string | undefined;
  onInternalError?: ((error: AppError, capability: string) => void) | undefined;
  audit?: AuditLog | undefined;
  approvals: ApprovalHook;
}

export interface ApprovalHook {
  /** Whether this call waits for someone else's approval instead of running now. */
  waitsForApproval(principal: Principal, capability: Capability): boolean;
  /** Holds the action instead of running it; what it returns is the call's answer (the waiting operation). */
  hold(deps: ApprovalDeps, action: ActionToHold): Promise<unknown>;
  /**
   * Ends the wait of an operation whose decision has ended (approved: carried out; otherwise
   * failed). Never asked by the core: the core hands the hook on to capabilities in their
   * context, for the ones that answer decisions.
   */
  settle(deps: ApprovalDeps, operationId: string): Promise<void>;
}
