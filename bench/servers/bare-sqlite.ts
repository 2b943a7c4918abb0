// Baseline (b): what a hurried team would write. node:http, the SHA-256 of the bearer looked up
// with a prepared statement, the same reach-filtered 20-row list query, JSON.stringify. No
// framework, no validation, no expiry/channel/plan/permission checks, no audit, no rate limit.
// argv: <dataDir>
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { DATABASE_FILE } from '../../src/db/connect.js';
import { listenUntilStopped } from '../support/child-server.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: bare-sqlite.js <dataDir>');
const db = new SQLite(join(dataDir, DATABASE_FILE));
db.pragma('journal_mode = WAL');

const findToken = db.prepare('SELECT id, team_id FROM api_tokens WHERE token_hash = ?');
const listServices = db.prepare(`
  SELECT id, name, server_id, parent_id, state, revision, port, created_at, updated_at
  FROM erp_services
  WHERE team_id = ? AND deleted_at IS NULL
    AND (id IN (SELECT service_id FROM api_token_services WHERE token_id = ?)
         OR parent_id IN (SELECT service_id FROM api_token_services WHERE token_id = ?))
    AND parent_id IS NULL
  ORDER BY id LIMIT ?`);

interface Row {
  id: string; name: string; server_id: string; parent_id: string | null; state: string;
  revision: number; port: number | null; created_at: string; updated_at: string;
}

const server = createServer((request, response) => {
  const token = findToken.get(createHash('sha256').update((request.headers.authorization ?? '').slice(7)).digest('hex')) as
    { id: string; team_id: string } | undefined;
  if (!token) {
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end('{"error":"unauthorized"}');
    return;
  }
  const query = request.url?.split('?')[1];
  const limit = Number(new URLSearchParams(query).get('limit') ?? 50);
  const rows = listServices.all(token.team_id, token.id, token.id, limit + 1) as Row[];
  const page = rows.slice(0, limit);
  const body = JSON.stringify({
    data: page.map((row) => ({
      id: row.id, name: row.name, server_id: row.server_id, parent_id: row.parent_id, is_copy: row.parent_id !== null,
      state: row.state, revision: row.revision,
      url: row.port !== null && row.state === 'running' ? `http://127.0.0.1:${row.port}/` : null,
      created_at: row.created_at, updated_at: row.updated_at,
    })),
    next_cursor: rows.length > limit ? Buffer.from(page[page.length - 1]!.id).toString('base64url') : null,
  });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  response.end(body);
});
listenUntilStopped(server, () => db.close());
