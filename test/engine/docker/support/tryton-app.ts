// What the Tryton suites share: JSON-RPC at a service's url as a team would speak it (login,
// then `Authorization: Session ...`), and the entries of a backup archive read back from its bytes.
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline } from 'node:stream/promises';
import { extract as tarExtract } from 'tar-stream';
import { bundledApp } from '../../../../src/engine/apps/bundled-apps.js';
import { decompressedFile } from '../../../../src/engine/backup-compression.js';

export const tryton = bundledApp('tryton')!;
/**
 * A first start makes the database (trytond-admin with four modules): a minute or two alone, but
 * over nine minutes on this two-core machine while other suites migrate their own Tryton.
 */
export const TRYTON_START_MS = 20 * 60_000;

/** One JSON-RPC call; `session` is the `Authorization: Session` value after a login. */
export async function rpc(base: string, method: string, params: unknown[], session?: string): Promise<{ status: number; result?: any; error?: unknown }> {
  const response = await fetch(`${base.replace(/\/$/, '')}/tryton/`, {
    method: 'POST', signal: AbortSignal.timeout(60_000),
    headers: { 'content-type': 'application/json', ...(session ? { authorization: `Session ${session}` } : {}) },
    body: JSON.stringify({ id: 1, method, params }),
  });
  const text = await response.text();
  const body = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) as { result?: unknown; error?: unknown } : { error: text };
  return { status: response.status, ...body };
}

/** The session of `login` (status 200), or throws with what Tryton answered. */
export async function trytonSession(base: string, login: string, password: string): Promise<string> {
  const answer = await rpc(base, 'common.db.login', [login, { password }, 'en']);
  if (answer.status !== 200 || !Array.isArray(answer.result)) throw new Error(`login ${login} answered ${answer.status}: ${JSON.stringify(answer.error)}`);
  const [userId, key] = answer.result as [number, string];
  return Buffer.from(`${login}:${userId}:${key}`).toString('base64');
}

/** The names of the parties (without the company's own ones created by Tryton, which have none here). */
export async function partyNames(base: string, session: string): Promise<string[]> {
  const found = await rpc(base, 'model.party.party.search_read', [[], 0, null, [['name', 'ASC']], ['name'], {}], session);
  if (found.status !== 200) throw new Error(`search_read answered ${found.status}: ${JSON.stringify(found.error)}`);
  return (found.result as { name: string }[]).map((party) => party.name);
}

export async function createParty(base: string, session: string, name: string): Promise<number> {
  const created = await rpc(base, 'model.party.party.create', [[{ name }], {}], session);
  if (created.status !== 200) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.error)}`);
  return (created.result as number[])[0]!;
}

/** Every entry of a backup archive (zstd-compressed tar): name, type and size; `keep` entries' bytes too. */
export async function archiveEntries(bytes: Buffer, file: string, keep: (name: string) => boolean = () => false) {
  writeFileSync(file, bytes);
  const entries: { name: string; type: string; size: number; bytes?: Buffer }[] = [];
  const extract = tarExtract();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: unknown) => {
      if (keep(header.name)) chunks.push(chunk as Buffer);
    });
    stream.on('end', () => {
      entries.push({ name: header.name, type: header.type ?? 'file', size: header.size ?? 0, ...(keep(header.name) ? { bytes: Buffer.concat(chunks) } : {}) });
      next();
    });
  });
  await pipeline(decompressedFile(file, 'zstd'), extract as unknown as NodeJS.WritableStream);
  return entries;
}

/** Polls GET /api/operations/{id} twice a second until the operation has ended: a Tryton start is long, and `serve` limits a token's rate. */
export async function waitForLongOperation(baseUrl: string, token: string, operationId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${baseUrl}/api/operations/${operationId}`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
    const body = (await response.json()) as { state: string } & Record<string, any>;
    if (response.status !== 200) throw new Error(`GET /api/operations/${operationId} answered ${response.status}: ${JSON.stringify(body)}`);
    if (body.state === 'succeeded' || body.state === 'failed') return body;
    if (Date.now() > deadline) throw new Error(`operation ${operationId} still ${body.state} after ${timeoutMs} ms`);
    await sleep(500);
  }
}

/**
 * A Tryton service made on `serverId` and started through REST as a team would (`team`:
 * teamCalls), with what its first answer gave once: its admin password; and its url.
 */
export async function startedTryton(
  team: { call(method: string, path: string, body?: object): Promise<{ status: number; body: any }>; actAndWait(method: string, path: string, timeoutMs: number, body?: object): Promise<any> },
  waitFor: (operationId: string) => Promise<any>, serverId: string, name = 'Tryton',
): Promise<{ serviceId: string; password: string; url: string }> {
  const accepted = await team.call('POST', '/api/service-erp', { server_id: serverId, name, app: 'tryton' });
  if (accepted.status !== 202) throw new Error(`POST /api/service-erp answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  const serviceId = accepted.body.service_id as string;
  const password = (await waitFor(accepted.body.id)).result.initial_credentials.password as string;
  const started = await team.actAndWait('POST', `/api/service-erp/${serviceId}/start`, TRYTON_START_MS);
  if (started.state !== 'succeeded') throw new Error(`the start of Tryton failed: ${JSON.stringify(started)}`);
  return { serviceId, password, url: (await team.call('GET', `/api/service-erp/${serviceId}`)).body.url };
}
