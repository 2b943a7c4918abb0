// `teaminfra services list|start`: the command line as a client of the REST API, with the token
// from `teaminfra login` (or TEAMINFRA_TOKEN). `start` waits for the operation, showing a
// progress line, unless --no-wait; it exits non-zero with the reason when the operation fails.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { apiTarget, ApiError, callApi } from './api-client.js';
import { elapsedSince, ProgressLine } from './progress-line.js';
import { UsageError } from './usage.js';

interface ServiceView { id: string; name: string; state: string; is_copy: boolean; parent_id: string | null; url: string | null }
interface OperationView { id: string; kind: string; state: 'queued' | 'running' | 'succeeded' | 'failed' | 'awaiting_approval'; reason: string | null; service_id: string | null }

const POLL_MS = 500;
const WAIT_LIMIT_MS = 15 * 60_000;

function parse(args: string[], command: string) {
  try {
    return parseArgs({
      args, allowPositionals: true, strict: true,
      options: { url: { type: 'string' }, json: { type: 'boolean' }, 'no-wait': { type: 'boolean' } },
    });
  } catch (error) {
    throw new UsageError(`services ${command}: ${(error as Error).message.replace(/\. To specify.*$/s, '.')} Run "teaminfra help" for usage.`);
  }
}

export async function runServices(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  switch (command) {
    case 'list':
      return listServices(rest);
    case 'start':
      return startService(rest);
    default:
      throw new UsageError(`services: unknown command "${command ?? ''}"; use "services list" or "services start SERVICE_ID".`);
  }
}

async function listServices(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, 'list');
  if (positionals.length > 0) throw new UsageError('services list takes no arguments.');
  const { base, token } = apiTarget(values.url);
  const services: ServiceView[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = (await callApi(base, token, 'GET', `/api/service-erp${query}`)).body as { data: ServiceView[]; next_cursor: string | null };
    services.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  if (values.json) {
    process.stdout.write(JSON.stringify(services) + '\n');
    return;
  }
  if (services.length === 0) {
    process.stdout.write('No ERP services that this token reaches.\n');
    return;
  }
  const rows = services.map((service) => [service.id, service.name, service.state, service.is_copy ? `copy of ${service.parent_id}` : '']);
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => (row[column] as string).length), ['ID', 'NAME', 'STATE'][column]?.length ?? 0));
  const line = (cells: string[]) => cells.map((cell, column) => (column < 3 ? cell.padEnd(widths[column] as number) : cell)).join('  ').trimEnd();
  process.stdout.write([line(['ID', 'NAME', 'STATE', '']), ...rows.map(line)].join('\n') + '\n');
}

async function startService(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, 'start');
  const [serviceId, ...extra] = positionals;
  if (!serviceId || extra.length > 0) throw new UsageError('services start takes one SERVICE_ID, e.g. "teaminfra services start svc_...".');
  const { base, token } = apiTarget(values.url);
  const accepted = (await callApi(base, token, 'POST', `/api/service-erp/${encodeURIComponent(serviceId)}/start`)).body as OperationView;
  if (values['no-wait']) {
    process.stdout.write(values.json ? JSON.stringify(accepted) + '\n' : `Start of ${serviceId} requested: operation ${accepted.id} is ${accepted.state}.\n`);
    return;
  }
  const done = await waitForOperation(base, token, accepted, `Starting ${serviceId}`);
  if (values.json) process.stdout.write(JSON.stringify(done) + '\n');
  if (done.state === 'failed') throw new ApiError(`Starting ${serviceId} failed: ${done.reason ?? 'no reason given'} (operation ${done.id}).`, 0);
  if (!values.json) process.stdout.write(`Started ${serviceId} (operation ${done.id} succeeded).\n`);
}

/** Polls GET /api/operations/{id} until the operation ends, with a progress line on stderr. */
async function waitForOperation(base: string, token: string, operation: OperationView, label: string): Promise<OperationView> {
  const progress = new ProgressLine();
  const started = Date.now();
  let current = operation;
  try {
    for (;;) {
      progress.update(current.state, `${label}: ${current.state} (${elapsedSince(started)}, operation ${current.id})`);
      if (current.state === 'succeeded' || current.state === 'failed') return current;
      if (Date.now() - started > WAIT_LIMIT_MS) {
        throw new ApiError(`${label}: still ${current.state} after ${elapsedSince(started)}; follow it with GET /api/operations/${current.id}.`, 0);
      }
      await sleep(POLL_MS);
      current = (await callApi(base, token, 'GET', `/api/operations/${current.id}`)).body as OperationView;
    }
  } finally {
    progress.end();
  }
}
