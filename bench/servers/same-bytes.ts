// Baseline (a): a bare node:http server answering every request with the exact status, headers
// and body teaminfra gave for the measured request. The floor of HTTP itself.
// argv: <response.json> holding { status, headers, bodyBase64 }
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { listenUntilStopped } from '../support/child-server.js';

const file = process.argv[2];
if (!file) throw new Error('usage: same-bytes.js <response.json>');
const captured = JSON.parse(readFileSync(file, 'utf8')) as { status: number; headers: Record<string, string>; bodyBase64: string };
const body = Buffer.from(captured.bodyBase64, 'base64');
const headers = { ...captured.headers, 'content-length': String(body.length) };

const server = createServer((_request, response) => {
  response.writeHead(captured.status, headers);
  response.end(body);
});
listenUntilStopped(server);
