// Initial credentials are shown once (issue 37): the answer that first shows a succeeded create
// operation to the token that created the service carries them (get_operation over REST or MCP,
// or the MCP action tool's own wait), and the same step erases them from the operation's row,
// leaving a sentence that says when and where they were shown. The erasure is one conditional
// UPDATE on the result as it was read, so of several readers at the same moment exactly one
// gets them, on SQLite and PostgreSQL alike. Lists never take them.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { Channel } from '../../core/principal.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { nowIso } from '../../db/ids.js';
import { replaceOperationResult } from '../../db/repositories/operations.js';
import { openInitialCredentials } from './initial-credentials.js';

export type InitialCredentials = NonNullable<ReturnType<typeof openInitialCredentials>>;

/** Who reads, and through which answer: the sentence left in the credentials' place names both. */
export interface CredentialsReader {
  /** The token that reads, or the member (in the panel): only who requested the create is given them. */
  tokenId?: string | undefined;
  userId?: string | undefined;
  channel: Channel;
  /** The capability whose answer carries them: get_operation, or the action tool that waited. */
  answer: string;
  secrets?: SecretBox | undefined;
}

interface StoredOperation {
  id: string; state: string; service_id: string | null; result?: string | null;
  requested_by_token_id?: string | null; requested_by_user_id?: string | null;
}

/** Whether `reader` requested the operation: its token, or the member who asked in the panel. */
export function requestedBy(operation: Omit<StoredOperation, 'id' | 'state' | 'service_id'>, reader: Pick<CredentialsReader, 'tokenId' | 'userId'>): boolean {
  if (reader.tokenId !== undefined) return operation.requested_by_token_id === reader.tokenId;
  return reader.userId !== undefined && operation.requested_by_user_id === reader.userId;
}

const WHERE_SHOWN: Record<Channel, string> = { api: 'over REST', mcp: 'over MCP', panel: 'in the panel' };

/**
 * The credentials, opened, for the one answer that erases them (`given`); null for any other
 * reader, or when there are none (any more). `lost`: they were there as read, but another answer
 * took them first (its sentence is in the row now).
 */
export async function takeInitialCredentials(
  db: Kysely<Database>, operation: StoredOperation, reader: CredentialsReader,
): Promise<{ given: InitialCredentials | null; lost: boolean }> {
  const none = { given: null, lost: false };
  const stored = operation.result;
  if (operation.state !== 'succeeded' || !stored || !operation.service_id || !reader.secrets) return none;
  if (!requestedBy(operation, reader)) return none;
  const credentials = openInitialCredentials(JSON.parse(stored) as object, operation.service_id, reader.secrets);
  if (!credentials) return none;
  const shown = `The initial credentials were shown once, at ${nowIso()}, in the answer of ${reader.answer} ` +
    `${WHERE_SHOWN[reader.channel]}, and are kept nowhere since.`;
  const taken = await replaceOperationResult(db, operation.id, stored, JSON.stringify({ initial_credentials_shown: shown }));
  return taken ? { given: credentials, lost: false } : { given: null, lost: true };
}
