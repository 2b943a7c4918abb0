import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceCreation } from '../../src/engine/requests/creations.js';
import { DisplayName, OperationView, ServerId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_erp_service',
  title: 'Create an ERP service',
  description:
    'Creates a stopped service; the operation gives its service_id and any initial_credentials (shown once).',
  permission: 'services:write',
  target: { kind: 'server', from: 'server_id' },
  creates: 'service',
  input: () => z.strictObject({
    server_id: ServerId(),
    name: DisplayName(),
    app: z.string().trim().min(1).max(64).optional()
      .describe('demo (default), tryton or one the operator added; all but demo need a Docker server.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict', 'restricted_token_cannot_create'],
  run: async (input, context) => operationView(await requestServiceCreation(context, 'create_erp_service', input)),
});
