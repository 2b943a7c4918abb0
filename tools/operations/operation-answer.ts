// The view of one operation as an answer that may be the first to show it succeeded to the token
// that requested it: get_operation (REST and MCP) and the MCP action tool's wait. Such an answer
// takes the created service's initial credentials from the row, once
// (src/engine/apps/initial-credentials-once.ts); a reader that lost the race to another answer
// reads the row again and sees the sentence left in their place.
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import { findOperation } from '../../src/db/repositories/operations.js';
import { takeInitialCredentials, type CredentialsReader } from '../../src/engine/apps/initial-credentials-once.js';
import type { Infer, OperationView } from '../schemas.js';
import { operationView } from '../views.js';

type OperationRow = Parameters<typeof operationView>[0];

export async function operationAnswer(db: Kysely<Database>, row: OperationRow, reader: CredentialsReader): Promise<Infer<typeof OperationView>> {
  const { given, lost } = await takeInitialCredentials(db, row, reader);
  if (!lost) return operationView(row, reader, given);
  const now = await findOperation(db, row.id);
  return operationView({ ...row, result: now?.result ?? null }, reader);
}
