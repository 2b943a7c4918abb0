import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { ServerId, ServerView } from '../schemas.js';
import { serverView } from '../views.js';

export default defineCapability({
  name: 'get_server',
  title: 'Get a server',
  description: 'A server: its state and capacity.',
  permission: 'servers:read',
  target: { kind: 'server', from: 'server_id' },
  input: () => z.strictObject({ server_id: ServerId() }),
  output: ServerView,
  http: { method: 'GET', path: '/api/servers/{server_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { target }) => serverView(target as Parameters<typeof serverView>[0]),
});
