import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listReachableServices } from '../../src/db/repositories/services.js';
import { toPage } from '../../src/db/pagination.js';
import { PageInput, pageOf, ServiceId, ServiceView } from '../schemas.js';
import { serviceView } from '../views.js';

export default defineCapability({
  name: 'list_erp_service_copies',
  title: "List a service's copies",
  description: 'The copies of a service.',
  permission: 'services:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), ...PageInput() }),
  output: () => pageOf(ServiceView()),
  http: { method: 'GET', path: '/api/service-erp/{service_id}/copies', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db, reach }) =>
    toPage(await listReachableServices(db.kysely, reach, input, input.service_id), input.limit, serviceView),
});
