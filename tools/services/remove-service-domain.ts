import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { checkDomainName, DomainNameError } from '../../src/engine/domains/domain-name.js';
import { removeServiceDomain } from '../../src/engine/domains/service-domains.js';
import { DomainName, ServiceDomainsView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'remove_service_domain',
  title: 'Remove a domain from a service',
  description: 'Stops the service answering at a domain its team added (not its platform name).',
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), domain: DomainName() }),
  output: ServiceDomainsView,
  http: { method: 'DELETE', path: '/api/service-erp/{service_id}/domains/{domain}', status: 200 },
  hints: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, { db, target }) => {
    const service = target as { id: string };
    let domain: string;
    try {
      domain = checkDomainName(input.domain, { allowLocal: true });
    } catch (error) {
      if (error instanceof DomainNameError) throw new AppError('not_found', `The service has no domain ${input.domain}.`);
      throw error;
    }
    return { service_id: service.id, domains: await removeServiceDomain(db.kysely, service.id, domain) };
  },
});
