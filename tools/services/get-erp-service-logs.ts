import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import type { LogStart } from '../../src/core/service-observer.js';
import { LogPageView, LogsInput, startsWithDate } from '../schemas.js';
import { answered, observerOf } from './observer-answers.js';

export default defineCapability({
  name: 'get_erp_service_logs',
  title: "Read a service's logs",
  description: "A service's latest output lines, or those after since; may hold personal data.",
  permission: 'services:logs',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject(LogsInput()),
  output: LogPageView,
  http: { method: 'GET', path: '/api/service-erp/{service_id}/logs', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, { observer }) =>
    answered(observerOf(observer).logs(input.service_id, { tail: input.tail, start: startOf(input.since) })),
});

/** A time when it reads as one (it starts with a date: LogsInput checked it as every time is), else a cursor (log-cursor.ts checks it). */
function startOf(since: string | undefined): LogStart {
  if (since === undefined || since === '') return { kind: 'latest' };
  if (!startsWithDate(since)) return { kind: 'cursor', cursor: since };
  return { kind: 'time', at: new Date(since) };
}
