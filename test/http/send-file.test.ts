// Downloads and Range (RFC 9110 section 14), against a real Fastify server streaming a real file.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileSource } from '../../src/core/capability.js';
import { parseRange, sendFile } from '../../src/http/send-file.js';

const CONTENT = Buffer.from('0123456789abcdefghij');
const SHA256 = createHash('sha256').update(CONTENT).digest('hex');
const ETAG = `"sha256-${SHA256}"`;

let server: FastifyInstance;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'teaminfra-send-file-'));
  const path = join(dir, 'backup.gz');
  writeFileSync(path, CONTENT);
  const file: FileSource = { path, filename: 'backup.gz', contentType: 'application/gzip', sizeBytes: CONTENT.length, sha256: SHA256 };
  // Nothing of a test is left running when the suite ends: close() cuts what is still open.
  server = Fastify({ forceCloseConnections: true });
  server.get('/file', (request, reply) => sendFile(request, reply, file, { path }));
  // A raw message kept in the database is served from its bytes, with the same rules.
  server.get('/bytes', (request, reply) => sendFile(request, reply, file, { bytes: CONTENT }));
  baseUrl = await server.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const download = (headers: Record<string, string> = {}) => fetch(`${baseUrl}/file`, { headers });

describe('sendFile', () => {
  it('serves the whole file with its digest as a strong ETag when no range is asked', async () => {
    const response = await download();
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(ETAG);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(CONTENT);
  });

  it('serves the range when If-Range is the current ETag', async () => {
    const response = await download({ Range: 'bytes=5-9', 'If-Range': ETAG });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe('bytes 5-9/20');
    expect(await response.text()).toBe('56789');
  });

  it('serves bytes read from the database whole, and a range of them, as it serves a file', async () => {
    const whole = await fetch(`${baseUrl}/bytes`);
    expect(whole.headers.get('content-length')).toBe('20');
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(CONTENT);
    const part = await fetch(`${baseUrl}/bytes`, { headers: { Range: 'bytes=-3' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 17-19/20');
    expect(await part.text()).toBe('hij');
  });

  it('serves the whole file when If-Range does not match', async () => {
    for (const ifRange of ['"sha256-something-else"', `W/${ETAG}`, 'Tue, 15 Nov 1994 08:12:31 GMT']) {
      const response = await download({ Range: 'bytes=5-9', 'If-Range': ifRange });
      expect(response.status, ifRange).toBe(200);
      expect(response.headers.get('content-range'), ifRange).toBeNull();
      expect(Buffer.from(await response.arrayBuffer()), ifRange).toEqual(CONTENT);
    }
  });

  it('ignores an invalid range and serves the whole file', async () => {
    for (const range of ['bytes=9-0', 'bytes=0-1,4-5', 'items=0-1', 'bytes=a-b']) {
      const response = await download({ Range: range });
      expect(response.status, range).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()), range).toEqual(CONTENT);
    }
  });

  it('answers 416 problem+json with Content-Range bytes */size when the range starts past the end', async () => {
    const response = await download({ Range: 'bytes=20-30' });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe('bytes */20');
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('content-disposition')).toBeNull();
    expect(await response.json()).toMatchObject({ status: 416, code: 'range_not_satisfiable' });
  });
});

describe('parseRange', () => {
  it('reads the three single-range forms and clamps the end to the file', () => {
    expect(parseRange('bytes=2-4', 10)).toEqual({ start: 2, end: 4 });
    expect(parseRange('bytes=2-', 10)).toEqual({ start: 2, end: 9 });
    expect(parseRange('bytes=-3', 10)).toEqual({ start: 7, end: 9 });
    expect(parseRange('bytes=5-99', 10)).toEqual({ start: 5, end: 9 });
    expect(parseRange('Bytes=0-0', 10)).toEqual({ start: 0, end: 0 });
  });

  it('ignores an invalid range when its last byte comes before its first', () => {
    expect(parseRange('bytes=9-0', 10)).toBeUndefined();
  });

  it('is unsatisfiable when the range starts past the end or asks for no bytes', () => {
    expect(parseRange('bytes=10-', 10)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 10)).toBe('unsatisfiable');
    expect(parseRange('bytes=-5', 0)).toBe('unsatisfiable');
  });
});
