import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServerCreation } from '../../src/engine/requests/creations.js';
import { DisplayName, OperationView } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_server',
  title: 'Create a server',
  description:
    'Creates a server for the team: a host for ERP services, with a capacity (how many services it can host). ' +
    'Returns the operation (at once over REST; over MCP the tool waits for it to end), whose server_id is the new server; when the operation has succeeded the ' +
    'server is ready for create_erp_service. Send an Idempotency-Key so that a retry cannot create it twice.',
  permission: 'servers:write',
  target: { kind: 'team' },
  creates: 'server',
  input: z.strictObject({
    name: DisplayName.describe('A name people recognise, such as "eu-west-1".'),
    capacity: z.number().int().min(1).max(200).default(20).describe('How many ERP services it can host, 1 to 200 (default 20).'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/servers', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'conflict', 'restricted_token_cannot_create'],
  run: async (input, context) => operationView(await requestServerCreation(context, 'create_server', input)),
});
