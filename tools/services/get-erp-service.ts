import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listServiceDomains } from '../../src/engine/domains/service-domains.js';
import { ServiceDetailView, ServiceId } from '../schemas.js';
import { serviceView } from '../views.js';

export default defineCapability({
  name: 'get_erp_service',
  title: 'Get an ERP service',
  description: 'A service or copy: state, health, url, revision, server, domains with certificates.',
  permission: 'services:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: ServiceDetailView,
  http: { method: 'GET', path: '/api/service-erp/{service_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  // invoke() has already found the service within reach.
  run: async (_input, { db, target }) => {
    const service = target as Parameters<typeof serviceView>[0];
    return { ...serviceView(service), domains: await listServiceDomains(db.kysely, service.id) };
  },
});
