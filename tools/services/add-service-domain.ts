import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { checkDomainName, DomainNameError } from '../../src/engine/domains/domain-name.js';
import { addServiceDomain } from '../../src/engine/domains/service-domains.js';
import { DomainName, ServiceDomainsView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'add_service_domain',
  title: 'Add a domain to a service',
  description:
    'Serves the service over HTTPS at your domain once its DNS points at the server; get_erp_service shows the ' +
    'certificate. 409 if another service has it.',
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), domain: DomainName() }),
  output: ServiceDomainsView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/domains', status: 200 },
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, { db, target }) => {
    const service = target as { id: string };
    let domain: string;
    try {
      domain = checkDomainName(input.domain);
    } catch (error) {
      if (error instanceof DomainNameError) throw new AppError('validation_failed', error.message);
      throw error;
    }
    return { service_id: service.id, domains: await addServiceDomain(db.kysely, service.id, domain) };
  },
});
