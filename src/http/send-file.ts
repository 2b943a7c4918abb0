// Streams a file with what a download needs: Content-Length, Content-Disposition, the SHA-256
// of the whole file as Repr-Digest (RFC 9530), and single-range requests (206) so an
// interrupted download can resume.
import { createReadStream } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileSource } from '../core/capability.js';

export function sendFile(request: FastifyRequest, reply: FastifyReply, file: FileSource): FastifyReply {
  const safeName = file.filename.replace(/[^\w.\-]/g, '_');
  reply.header('Content-Type', file.contentType)
    .header('Content-Disposition', `attachment; filename="${safeName}"`)
    .header('Accept-Ranges', 'bytes');
  if (file.sha256) reply.header('Repr-Digest', `sha-256=:${Buffer.from(file.sha256, 'hex').toString('base64')}:`);
  const range = parseRange(request.headers.range, file.sizeBytes);
  if (range === 'unsatisfiable') {
    return reply.code(416).header('Content-Range', `bytes */${file.sizeBytes}`).send();
  }
  if (range) {
    return reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.sizeBytes}`)
      .header('Content-Length', String(range.end - range.start + 1))
      .send(createReadStream(file.path, { start: range.start, end: range.end }));
  }
  return reply.code(200).header('Content-Length', String(file.sizeBytes)).send(createReadStream(file.path));
}

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range; anything else is served whole. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
