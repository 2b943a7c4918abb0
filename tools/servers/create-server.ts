import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServerCreation } from '../../src/engine/requests/creations.js';
import { DisplayName, OperationView } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_server',
  title: 'Create a server',
  description: 'Creates a server for ERP services; the operation gives its server_id.',
  permission: 'servers:write',
  target: { kind: 'team' },
  creates: 'server',
  input: () => z.strictObject({
    name: DisplayName(),
    capacity: z.number().int().min(1).max(200).default(20).describe('ERP services it can host.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/servers', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'conflict', 'restricted_token_cannot_create'],
  run: async (input, context) => operationView(await requestServerCreation(context, 'create_server', input)),
});
