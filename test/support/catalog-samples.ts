// Valid sample inputs for any capability of the catalog, built from its input shape and a
// seeded team, so that suites generated from the catalog cover capabilities added later.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compress as zstdCompress } from 'zstd-napi';
import type { Capability } from '../../src/core/capability.js';
import { newId, nowIso } from '../../src/db/ids.js';
import type { App } from '../../src/app.js';
import { insertCompletedBackup, type SeededTeam } from './fixtures.js';
import { createToken } from '../../src/db/repositories/tokens.js';

export interface SeededWithHistory extends SeededTeam {
  backupId: string;
  operationId: string;
  /** An email kept by the copy's mail catcher, with its raw file. */
  emailId: string;
  /** A pending decision about serviceIds[0] (options approve, deny), asked by another token of the team. */
  decisionId: string;
}

/** Adds a completed backup of serviceIds[0], a finished operation on it, and an email caught by the copy. */
export async function addHistory(app: App, team: SeededTeam): Promise<SeededWithHistory> {
  const backupId = newId('bak');
  const operationId = newId('op');
  const serviceId = team.serviceIds[0];
  await app.db.kysely.insertInto('operations').values({
    id: operationId, team_id: team.teamId, kind: 'start', service_id: serviceId, server_id: team.serverIds[0],
    state: 'succeeded', reason: null, parameters: '{}', result: null, requested_by_token_id: null, requested_channel: 'api',
    idempotency_key: null, request_fingerprint: null, lease_owner: null, lease_expires_at: null,
    created_at: nowIso(), started_at: nowIso(), finished_at: nowIso(), decision_id: null,
  }).execute();
  // A real file, so that downloading it works; its content need not be a database.
  const backupPath = join(app.config.dataDir, 'backups', serviceId, `${backupId}.sqlite.zst`);
  const backupBytes = zstdCompress(Buffer.from(`backup ${backupId} of ${serviceId}\n`));
  mkdirSync(dirname(backupPath), { recursive: true });
  writeFileSync(backupPath, backupBytes);
  await insertCompletedBackup(app, { id: backupId, teamId: team.teamId, serviceId, filePath: backupPath, bytes: backupBytes });
  const now = nowIso();
  for (const id of [serviceId, team.copyId]) {
    await app.db.kysely.insertInto('service_domains').values({
      domain: sampleDomain(id), service_id: id, kind: 'custom', certificate_state: 'pending', certificate_expires_at: null,
      certificate_reason: null, created_at: now, updated_at: now,
    }).execute();
  }
  const emailId = newId('eml');
  const rawPath = join(app.config.dataDir, 'mail', team.copyId, `${emailId}.eml`);
  const raw = 'From: erp@copy.example\r\nTo: admin@example.com\r\nSubject: Reset\r\n\r\nReset link: http://copy/reset?t=1\r\n';
  mkdirSync(dirname(rawPath), { recursive: true });
  writeFileSync(rawPath, raw);
  await app.db.kysely.insertInto('caught_emails').values({
    id: emailId, team_id: team.teamId, copy_id: team.copyId, message_id: null, sender: 'erp@copy.example',
    recipients: '["admin@example.com"]', subject: 'Reset', text_body: 'Reset link: http://copy/reset?t=1', html_body: null,
    attachments: '[]', raw_path: rawPath, size_bytes: Buffer.byteLength(raw), received_at: nowIso(),
  }).execute();
  const asker = await createToken(app.db.kysely, {
    teamId: team.teamId, name: 'Asking agent', source: 'cli', acceptedBy: 'both', fullAccess: true, permissions: [],
    serviceIds: null, serverIds: null, expiresOn: null, createdByUserId: null,
  });
  const decisionId = newId('dec');
  await app.db.kysely.insertInto('decisions').values({
    id: decisionId, team_id: team.teamId, asked_by_token_id: asker.id, asked_channel: 'mcp', service_id: serviceId, operation_id: null,
    question: 'Deploy on Friday?', context: null, options: '["approve","deny"]', state: 'pending', answer: null,
    answered_by_type: null, answered_by_id: null, answered_channel: null, answered_at: null, created_at: nowIso(),
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  }).execute();
  return { ...team, backupId, operationId, emailId, decisionId };
}

/** A domain of the service's own, unique to it (names are unique across every team). */
export function sampleDomain(serviceId: string): string {
  return `erp-${createHash('sha256').update(serviceId).digest('hex').slice(0, 12)}.example.org`;
}

/** The id field a capability's target is named by, mapped to the seeded thing of that kind. */
export function sampleInput(capability: Capability, team: SeededWithHistory, serviceId?: string): Record<string, unknown> {
  // Only copies have a mail catcher: its capabilities act on the copy.
  const defaultService = capability.permission === 'mailcatcher:read' ? team.copyId : team.serviceIds[0];
  const known: Record<string, unknown> = {
    service_id: serviceId ?? defaultService,
    // A restore goes into the service the backup was taken of, or (for the copy case) into its copy.
    target_service_id: serviceId ?? team.serviceIds[0],
    server_id: team.serverIds[0],
    backup_id: team.backupId,
    operation_id: team.operationId,
    email_id: team.emailId,
    decision_id: team.decisionId,
    question: 'Which release goes out?',
    // A name of the target service (addHistory gave it one): adding it again is a no-op, removing it works.
    domain: sampleDomain(serviceId ?? defaultService),
    answer: 'approve',
    name: 'Matrix item',
    frequency: 'daily',
    time: '02:30',
    keep_daily: 7,
    keep_weekly: 4,
    keep_monthly: 6,
    // set_outgoing_mail: removing the relay is valid on any production service, and reaches no network.
    relay: null,
  };
  const input: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries(capability.input.shape)) {
    const optional = (schema as { safeParse(value: unknown): { success: boolean } }).safeParse(undefined).success;
    if (field in known) input[field] = known[field];
    else if (!optional) throw new Error(`No sample for required field ${field} of ${capability.name}; add one in test/support/catalog-samples.ts.`);
  }
  return input;
}

/** Splits a sample input into the URL (path params filled, query for GET/DELETE) and a JSON body. */
export function requestFor(capability: Capability, input: Record<string, unknown>): { path: string; body?: string } {
  const rest = { ...input };
  const path = capability.http.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = String(rest[name]);
    delete rest[name];
    return encodeURIComponent(value);
  });
  if (capability.http.method === 'GET' || capability.http.method === 'DELETE') {
    const query = new URLSearchParams(Object.entries(rest).map(([key, value]): [string, string] => [key, String(value)])).toString();
    return { path: query ? `${path}?${query}` : path };
  }
  return { path, body: JSON.stringify(rest) };
}
