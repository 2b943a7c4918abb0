// Single-use, short-lived download links. The link value is the credential, so only its hash
// is stored; using it also requires the token that asked for it to still be valid.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { FileSource } from '../../core/capability.js';
import type { Database } from '../tables.js';
import { nowIso } from '../ids.js';

export const LINK_MINUTES = 5;
const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

export async function createDownloadLink(db: Kysely<Database>, teamId: string, tokenId: string, file: FileSource) {
  const value = randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + LINK_MINUTES * 60_000).toISOString();
  await db.insertInto('download_links').values({
    id_hash: hashOf(value), team_id: teamId, token_id: tokenId, file: JSON.stringify(file), created_at: nowIso(), expires_at: expiresAt, used_at: null,
  }).execute();
  return { path: `/downloads/${value}`, expiresAt };
}

/** Marks the link used and returns its file, or undefined when unknown, used, expired or its token is no longer valid. */
export async function consumeDownloadLink(db: Kysely<Database>, value: string): Promise<FileSource | undefined> {
  const now = nowIso();
  const idHash = hashOf(value);
  const claimed = await db.updateTable('download_links').set({ used_at: now })
    .where('id_hash', '=', idHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return undefined;
  const row = await db.selectFrom('download_links as l').innerJoin('api_tokens as t', 't.id', 'l.token_id')
    .select(['l.file', 't.revoked_at']).where('l.id_hash', '=', idHash).executeTakeFirst();
  if (!row || row.revoked_at !== null) return undefined;
  return JSON.parse(row.file) as FileSource;
}
