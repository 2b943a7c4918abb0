import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listReachableOperations } from '../../src/db/repositories/operations.js';
import { toPage } from '../../src/db/pagination.js';
import { OperationView, PageInput, pageOf } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'list_operations',
  title: 'List operations',
  description: 'Long actions on what this token reaches; get_operation gives initial_credentials.',
  permission: 'services:read',
  readableByRequester: true,
  target: { kind: 'team' },
  input: () => z.strictObject({ ...PageInput() }),
  output: () => pageOf(OperationView()),
  http: { method: 'GET', path: '/api/operations', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed'],
  run: async (input, { db, reach, actor }) =>
    toPage(await listReachableOperations(db.kysely, reach, input), input.limit, (row) => operationView(row, actor)),
});
