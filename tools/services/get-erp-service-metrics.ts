import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { MetricsView, ServiceId, type Infer, type ServiceState } from '../schemas.js';
import { answered, observerOf } from './observer-answers.js';

export default defineCapability({
  name: 'get_erp_service_metrics',
  title: "Get a service's metrics",
  description: "A service's state, uptime, restarts, CPU (% of a core), memory and disk use.",
  permission: 'services:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: MetricsView,
  http: { method: 'GET', path: '/api/service-erp/{service_id}/metrics', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, { observer, target }) => ({
    state: (target as { state: Infer<typeof ServiceState> }).state,
    ...(await answered(observerOf(observer).metrics(input.service_id))),
  }),
});
