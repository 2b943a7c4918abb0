// GET /downloads/{link}: the file behind a short-lived link that a download capability issued
// (over MCP) after invoke() allowed it. The link is the credential. What "one download" means
// for HEAD and Range is defined in src/db/repositories/download-links.ts and README.md.
import type { FastifyInstance } from 'fastify';
import type { CoreDeps } from '../core/invoke.js';
import { AppError } from '../core/errors.js';
import { findUsableDownloadLink, spendDownloadLink, startDownload } from '../db/repositories/download-links.js';
import { contentsOf, type FileContents } from './file-contents.js';
import { sendProblem } from './problem.js';
import { deliversLastByte, sendFile } from './send-file.js';

export function registerDownloadLinks(server: FastifyInstance, deps: CoreDeps): void {
  const db = deps.db.kysely;
  // Links with a response carrying their last byte under way on this node, until its spending is
  // written. They are held from the moment such a response starts, not from when it finishes: the
  // client can read the last byte (and ask again) before this process sees 'finish', so marking
  // them only then would let a quick client fetch a spent link a second time.
  const finishing = new Set<string>();

  server.get<{ Params: { link: string } }>('/downloads/:link', async (request, reply) => {
    const value = request.params.link;
    const link = finishing.has(value) ? undefined : await findUsableDownloadLink(db, value);
    if (!link || finishing.has(value)) {
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
      await startDownload(db, link.idHash);
      if (deliversLastByte(request, link.file)) {
        finishing.add(value);
        // An interrupted response leaves the link usable (to resume); a complete one spends it.
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) finishing.delete(value);
          else void spendDownloadLink(db, link.idHash).finally(() => finishing.delete(value));
        });
      }
    }
    return sendFile(request, reply, link.file, contents);
  });
}
