// GET /downloads/{link}: the file behind a short-lived link that a download capability issued
// (over MCP) after invoke() allowed it. The link is the credential. What "one download" means
// for HEAD and Range is defined in src/db/repositories/download-links.ts and docs/rest-api.md.
// The download's start (the link's first GET) is a row of the activity trail, in the name of the
// token (or the member, in the panel) that asked for the link: that is when a backup or an email is read, not when the link is
// issued (invoke() records no row for that).
import type { FastifyInstance } from 'fastify';
import type { CoreDeps } from '../core/invoke.js';
import { AppError } from '../core/errors.js';
import {
  findUsableDownloadLink, reopenDownloadLink, spendDownloadLink, startDownload, type UsableDownloadLink,
} from '../db/repositories/download-links.js';
import { contentsOf, type FileContents } from './file-contents.js';
import { sendProblem } from '../channel-neutral/problem.js';
import { deliversLastByte, sendFile } from './send-file.js';

export function registerDownloadLinks(server: FastifyInstance, deps: CoreDeps): void {
  const db = deps.db.kysely;

  server.get<{ Params: { link: string } }>('/downloads/:link', async (request, reply) => {
    const link = await findUsableDownloadLink(db, request.params.link);
    if (!link) {
      return sendProblem(reply, new AppError('not_found', 'This download link is unknown, already used or expired. Ask for a new one.'));
    }
    let contents: FileContents;
    try {
      contents = await contentsOf(deps.db, link.file);
    } catch (error) {
      if (error instanceof AppError) return sendProblem(reply, error);
      throw error;
    }
    if (request.method === 'GET') {
      const { window, first } = await startDownload(db, link.idHash);
      if (first) recordDownload(deps, link);
      if (deliversLastByte(request, link.file)) {
        // Spent before the first byte goes out, so no client, however quick, can fetch it again
        // (waiting for the response to end raced with clients that read the last byte before
        // this process saw it sent). A response that does not end complete gives the link back,
        // for the rest of its resume window.
        const spentAt = await spendDownloadLink(db, link.idHash, window);
        if (!spentAt) {
          if ('afterSent' in contents) contents.afterSent?.(false);
          return sendProblem(reply, new AppError('not_found', 'This download link is unknown, already used or expired. Ask for a new one.'));
        }
        // Complete once every byte was handed to the connection: the client can have them all (and
        // close) before this response has formally ended, which is no interruption. Given back
        // only if nothing spent it since (a client retrying on a new connection spends it again).
        let complete = false;
        reply.raw.once('finish', () => { complete = true; });
        reply.raw.once('close', () => { if (!complete) void reopenDownloadLink(db, link.idHash, window, spentAt); });
        return sendFile(request, reply, link.file, contents, () => { complete = true; });
      }
    }
    return sendFile(request, reply, link.file, contents);
  });
}

function recordDownload(deps: CoreDeps, link: UsableDownloadLink): void {
  const { record } = link;
  deps.audit.record({
    team_id: link.teamId, ...(link.asker.tokenId !== undefined ? { actor_type: 'token', actor_id: link.asker.tokenId } : { actor_type: 'user', actor_id: link.asker.userId }),
    channel: record.channel ?? 'mcp',
    action: record.action ?? 'download_link', target_type: record.targetType, target_id: record.targetId,
    outcome: 'allowed', code: null, detail: 'through a download link',
  });
}
