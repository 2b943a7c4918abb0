import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceCreation } from '../../src/engine/requests/creations.js';
import { DisplayName, OperationView, ServerId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_erp_service',
  title: 'Create an ERP service',
  description:
    'Creates an ERP service on one of the team\'s servers, with its own database (seeded, with an `admin` login). ' +
    'Returns the operation (at once over REST; over MCP the tool waits for it to end), whose service_id is the ' +
    'new service; when the operation has succeeded ' +
    'the service exists, stopped: start it with start_erp_service. Its outgoing mail is none. Refused (409) when ' +
    'the server is full or not ready. Send an Idempotency-Key so that a retry cannot create it twice. For an app with its own ' +
    'admin login (tryton), the succeeded operation\'s result holds initial_credentials {login, password}, shown only to the ' +
    'token that created the service: keep the password, no other answer shows it.',
  permission: 'services:write',
  target: { kind: 'server', from: 'server_id' },
  creates: 'service',
  input: z.strictObject({
    server_id: ServerId,
    name: DisplayName.describe('A name people recognise, such as "Production ERP".'),
    app: z.string().trim().min(1).max(64).optional()
      .describe('The app it runs, by name: a bundled one (demo, tryton) or one the operator registered. Default: the server\'s own image ' +
        '(the demo). An app other than demo needs a server that is a Docker engine.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict', 'restricted_token_cannot_create'],
  run: async (input, context) => operationView(await requestServiceCreation(context, 'create_erp_service', input)),
});
