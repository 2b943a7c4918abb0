// GET /downloads/{link}: the file behind a short-lived link that a download capability issued
// (over MCP) after invoke() allowed it. The link is the credential. What "one download" means
// for HEAD and Range is defined in src/db/repositories/download-links.ts and README.md.
import type { FastifyInstance } from 'fastify';
import type { CoreDeps } from '../core/invoke.js';
import { AppError } from '../core/errors.js';
import { findUsableDownloadLink, spendDownloadLink, startDownload } from '../db/repositories/download-links.js';
import { sendProblem } from './problem.js';
import { deliversLastByte, sendFile } from './send-file.js';

export function registerDownloadLinks(server: FastifyInstance, deps: CoreDeps): void {
  const db = deps.db.kysely;
  // Links whose last byte this node has sent but whose spending is still being written: without
  // this, a client quick enough could fetch the file again in between.
  const spending = new Set<string>();

  server.get<{ Params: { link: string } }>('/downloads/:link', async (request, reply) => {
    const usedUpHere = spending.has(request.params.link);
    const link = usedUpHere ? undefined : await findUsableDownloadLink(db, request.params.link);
    if (!link) {
      return sendProblem(reply, new AppError('not_found', 'This download link is unknown, already used or expired. Ask for a new one.'));
    }
    if (request.method === 'GET') {
      await startDownload(db, link.idHash);
      if (deliversLastByte(request, link.file)) {
        reply.raw.once('finish', () => {
          spending.add(request.params.link);
          void spendDownloadLink(db, link.idHash).finally(() => spending.delete(request.params.link));
        });
      }
    }
    return sendFile(request, reply, link.file);
  });
}
