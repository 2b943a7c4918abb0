// Short-lived download links, each good for one download. The link value is the credential, so
// only its hash is stored; using it also requires the token that asked for it to still be valid
// (or, for a link a member asked for in the panel, the member to still be in the team).
//
// "One download", precisely (docs/rest-api.md, "Mail catcher"): a link not yet used expires
// LINK_MINUTES after it was issued. HEAD never uses it up (a link preview only looks). The first
// GET starts the download and gives it RESUME_MINUTES from then, during which GETs with Range
// may resume it. The link is spent when a response carrying the file's last byte starts, and given
// back if that response does not end complete: an interrupted download can resume, a finished one
// cannot be repeated.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isExpired } from '../../auth/expiry.js';
import type { FileSource } from '../../core/capability.js';
import type { Database } from '../tables.js';
import { nowIso } from '../ids.js';

export const LINK_MINUTES = 5;
export const RESUME_MINUTES = 10;
const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

/** What a link's use is recorded as in the activity trail: the tool that issued it, what it reads, on which channel it was asked. */
export interface DownloadRecord {
  action: string;
  target: { type: string; id: string };
  channel: string;
}

/** Who asks for a link: a token, or a member in the panel. */
export type LinkAsker = { tokenId: string; userId?: undefined } | { userId: string; tokenId?: undefined };

export async function createDownloadLink(db: Kysely<Database>, teamId: string, asker: LinkAsker, file: FileSource, record: DownloadRecord) {
  const value = randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + LINK_MINUTES * 60_000).toISOString();
  await db.insertInto('download_links').values({
    id_hash: hashOf(value), team_id: teamId, token_id: asker.tokenId ?? null, user_id: asker.userId ?? null, file: JSON.stringify(file), created_at: nowIso(), expires_at: expiresAt, used_at: null,
    action: record.action, target_type: record.target.type, target_id: record.target.id, channel: record.channel,
  }).execute();
  return { path: `/downloads/${value}`, expiresAt };
}

export interface UsableDownloadLink {
  idHash: string;
  file: FileSource;
  /** Who asked for it, and what its use is recorded as (null parts: a link issued by an earlier version). */
  teamId: string;
  asker: LinkAsker;
  record: { action: string | null; targetType: string | null; targetId: string | null; channel: string | null };
}

/**
 * The link and its file while it can be used (known, neither spent nor expired, its token neither
 * revoked nor expired, or its member still in the team); changes nothing.
 */
export async function findUsableDownloadLink(db: Kysely<Database>, value: string): Promise<UsableDownloadLink | undefined> {
  const idHash = hashOf(value);
  const row = await db.selectFrom('download_links as l').leftJoin('api_tokens as t', 't.id', 'l.token_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.team_id', '=', 'l.team_id').onRef('m.user_id', '=', 'l.user_id'))
    .innerJoin('teams as team', 'team.id', 'l.team_id')
    .select(['l.file', 'l.team_id', 'l.token_id', 'l.user_id', 'l.action', 'l.target_type', 'l.target_id', 'l.channel',
      't.id as known_token', 't.revoked_at', 't.expires_on', 'm.user_id as member', 'm.removed_at', 'team.timezone'])
    .where('l.id_hash', '=', idHash).where('l.expires_at', '>', nowIso()).executeTakeFirst();
  if (!row) return undefined;
  const asker: LinkAsker | undefined = row.token_id !== null
    ? (row.known_token !== null && row.revoked_at === null && !isExpired(row.expires_on, row.timezone) ? { tokenId: row.token_id } : undefined)
    : (row.user_id !== null && row.member !== null && row.removed_at === null ? { userId: row.user_id } : undefined);
  if (!asker) return undefined;
  return {
    idHash, file: JSON.parse(row.file) as FileSource, teamId: row.team_id, asker,
    record: { action: row.action, targetType: row.target_type, targetId: row.target_id, channel: row.channel },
  };
}

/**
 * A GET uses the link: the first one opens the window in which the download may be resumed.
 * Returns the window's end, and whether this GET was the first (the download's start).
 */
export async function startDownload(db: Kysely<Database>, idHash: string): Promise<{ window: string; first: boolean }> {
  const now = Date.now();
  const window = new Date(now + RESUME_MINUTES * 60_000).toISOString();
  const opened = await db.updateTable('download_links').set({ used_at: new Date(now).toISOString(), expires_at: window })
    .where('id_hash', '=', idHash).where('used_at', 'is', null).executeTakeFirst();
  if (Number(opened.numUpdatedRows) === 1) return { window, first: true };
  // A later GET (a resume): the window its first GET opened.
  const row = await db.selectFrom('download_links').select('expires_at').where('id_hash', '=', idHash).executeTakeFirstOrThrow();
  return { window: row.expires_at, first: false };
}

/**
 * A response carrying the file's last byte is starting: the link serves nothing more. Only one
 * such response can take it (compare-and-set on the window it was seen with); false for the others.
 */
export async function spendDownloadLink(db: Kysely<Database>, idHash: string, window: string): Promise<string | undefined> {
  // A mark of this spending alone (a time a microsecond-random part past now, still in the past
  // of any later check), so that giving the link back cannot undo a later spending.
  const spentAt = new Date(Date.now() - 1000 - randomInt(0, 1_000_000) / 1000).toISOString();
  const result = await db.updateTable('download_links').set({ expires_at: spentAt })
    .where('id_hash', '=', idHash).where('expires_at', '=', window).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? spentAt : undefined;
}

/** That response did not end complete: the download may be resumed until the end of its window. */
export async function reopenDownloadLink(db: Kysely<Database>, idHash: string, window: string, spentAt: string): Promise<void> {
  await db.updateTable('download_links').set({ expires_at: window }).where('id_hash', '=', idHash).where('expires_at', '=', spentAt).execute();
}
