// Streams a file with what a download needs: Content-Length, Content-Disposition, the SHA-256
// of the whole file as Repr-Digest (RFC 9530) and as a strong ETag, and single-range requests
// (206) so an interrupted download can resume. Range rules follow RFC 9110 section 14.
import { createReadStream } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileSource } from '../core/capability.js';
import { AppError } from '../core/errors.js';
import type { FileContents } from './file-contents.js';
import { sendProblem } from '../channel-neutral/problem.js';

/** `onLastByteRead`: the last byte asked for has been handed to the response. */
export function sendFile(
  request: FastifyRequest, reply: FastifyReply, file: FileSource, contents: FileContents, onLastByteRead?: () => void,
): FastifyReply {
  const etag = etagOf(file);
  if ('afterSent' in contents && contents.afterSent) {
    const afterSent = contents.afterSent;
    reply.raw.once('close', () => afterSent(deliversLastByte(request, file) && reply.raw.writableFinished));
  }
  reply.header('Accept-Ranges', 'bytes');
  if (etag) reply.header('ETag', etag);
  const range = rangeToServe(request, file.sizeBytes, etag);
  if (range === 'unsatisfiable') {
    reply.header('Content-Range', `bytes */${file.sizeBytes}`);
    return sendProblem(reply, new AppError('range_not_satisfiable',
      `The requested range starts beyond the end of the file, which has ${file.sizeBytes} bytes.`));
  }
  const safeName = file.filename.replace(/[^\w.\-]/g, '_');
  reply.header('Content-Type', file.contentType).header('Content-Disposition', `attachment; filename="${safeName}"`);
  if (file.sha256) reply.header('Repr-Digest', `sha-256=:${Buffer.from(file.sha256, 'hex').toString('base64')}:`);
  if (range) {
    return reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.sizeBytes}`)
      .header('Content-Length', String(range.end - range.start + 1))
      .send(bytesOf(contents, range, range.end - range.start + 1, onLastByteRead));
  }
  return reply.code(200).header('Content-Length', String(file.sizeBytes)).send(bytesOf(contents, undefined, file.sizeBytes, onLastByteRead));
}

function bytesOf(contents: FileContents, range: { start: number; end: number } | undefined, length: number, onLastByteRead?: () => void) {
  if ('bytes' in contents) {
    // Handed to the response whole, in one write.
    onLastByteRead?.();
    return range ? contents.bytes.subarray(range.start, range.end + 1) : contents.bytes;
  }
  const readable = createReadStream(contents.path, range);
  if (onLastByteRead) {
    // Counted on 'data', not on 'end': the client can have every byte (and close) before the
    // stream reads past the end of the file.
    let left = length;
    if (left === 0) onLastByteRead();
    readable.on('data', (chunk: Buffer | string) => {
      left -= chunk.length;
      if (left === 0) onLastByteRead();
    });
  }
  return readable;
}

/** Whether the answer sendFile gives this request carries the file's last byte (a HEAD or a 416 does not). */
export function deliversLastByte(request: FastifyRequest, file: FileSource): boolean {
  if (request.method !== 'GET') return false;
  const range = rangeToServe(request, file.sizeBytes, etagOf(file));
  return range === undefined || (range !== 'unsatisfiable' && range.end === file.sizeBytes - 1);
}

/**
 * The range to serve, if any. Range applies to GET only, and only while the If-Range validator
 * (when sent) is our strong ETag: a file that changed, or a validator we never gave (a date: we
 * send no Last-Modified), means the client's earlier part is of another file, so it gets it whole.
 */
function rangeToServe(request: FastifyRequest, size: number, etag: string | undefined) {
  if (request.method !== 'GET') return undefined;
  const ifRange = request.headers['if-range'];
  if (ifRange !== undefined && (etag === undefined || String(ifRange).trim() !== etag)) return undefined;
  return parseRange(request.headers.range, size);
}

/** The files offered are immutable (a backup, a caught email), so their digest is a strong validator. */
function etagOf(file: FileSource): string | undefined {
  return file.sha256 ? `"sha256-${file.sha256}"` : undefined;
}

/**
 * One `bytes=a-b`, `bytes=a-` or `bytes=-n` range. Anything else (several ranges, another unit,
 * or an invalid one such as `bytes=9-0`) is ignored, so the file is served whole; a valid range
 * that lies wholly beyond the end of the file is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  if (match[2] !== '' && Number(match[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1) };
}
