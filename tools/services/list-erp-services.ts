import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listReachableServices } from '../../src/db/repositories/services.js';
import { toPage } from '../../src/db/pagination.js';
import { PageInput, pageOf, ServiceView } from '../schemas.js';
import { serviceView } from '../views.js';

export default defineCapability({
  name: 'list_erp_services',
  title: 'List ERP services',
  description: 'Services this token reaches; copies: list_erp_service_copies.',
  permission: 'services:read',
  target: { kind: 'team' },
  input: () => z.strictObject({ ...PageInput(), health: z.enum(['healthy', 'unhealthy']).optional() }),
  output: () => pageOf(ServiceView()),
  http: { method: 'GET', path: '/api/service-erp', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed'],
  run: async (input, { db, reach }) =>
    toPage(await listReachableServices(db.kysely, reach, input, null, input.health), input.limit, serviceView),
});
