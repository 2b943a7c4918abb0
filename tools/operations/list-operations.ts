import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listReachableOperations } from '../../src/db/repositories/operations.js';
import { toPage } from '../../src/db/pagination.js';
import { OperationView, PageInput, pageOf } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'list_operations',
  title: 'List operations',
  description: 'The long actions on what this token reaches, without initial_credentials (get_operation gives them).',
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
