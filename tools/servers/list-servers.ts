import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listReachableServers } from '../../src/db/repositories/servers.js';
import { toPage } from '../../src/db/pagination.js';
import { PageInput, pageOf, ServerView } from '../schemas.js';
import { serverView } from '../views.js';

export default defineCapability({
  name: 'list_servers',
  title: 'List servers',
  description: 'The servers this token reaches.',
  permission: 'servers:read',
  target: { kind: 'team' },
  input: () => z.strictObject({ ...PageInput() }),
  output: () => pageOf(ServerView()),
  http: { method: 'GET', path: '/api/servers', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed'],
  run: async (input, { db, reach }) =>
    toPage(await listReachableServers(db.kysely, reach, input), input.limit, serverView),
});
