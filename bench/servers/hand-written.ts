// Baseline (c): the best endpoint a careful engineer would write by hand for this one answer.
// node:http; the SHA-256 of the bearer looked up by its unique index (a revoked token is not
// found); then the fastest correct reach-filtered query: a restricted token's list walked in
// its primary-key order with each service looked up by id, the whole team through its
// (team_id, id) index otherwise. Both statements prepared once and read in better-sqlite3's raw
// mode (arrays: no row object built in C++ only to be reshaped), the page built from them with
// JSON.stringify, byte for byte what teaminfra answers. No framework, no validation, no
// expiry/channel/plan/permission checks, no audit, no rate limit: the floor for this answer.
// Written against schema.sql, not against our repositories.
// argv: <dataDir>
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { DATABASE_FILE } from '../../src/db/connect.js';
import { listenUntilStopped } from '../support/child-server.js';
import { listStatements, type ListRow } from './list-statements.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: hand-written.js <dataDir>');
const db = new SQLite(join(dataDir, DATABASE_FILE));
db.pragma('journal_mode = WAL');

const findToken = db.prepare('SELECT id, team_id, restrict_services FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL');
const list = listStatements(db);

interface Token { id: string; team_id: string; restrict_services: number }

function urlOf(state: string, port: number | null, publishedHost: string | null): string | null {
  if (port === null || state !== 'running') return null;
  const host = publishedHost ?? '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
}

const server = createServer((request, response) => {
  const authorization = request.headers.authorization ?? '';
  const token = authorization.startsWith('Bearer ')
    ? findToken.get(createHash('sha256').update(authorization.slice(7)).digest('hex')) as Token | undefined
    : undefined;
  if (!token) {
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end('{"error":"unauthorized"}');
    return;
  }
  const query = request.url?.split('?')[1];
  const limit = Math.min(100, Number(new URLSearchParams(query).get('limit') ?? 50) || 50);
  const rows = (token.restrict_services === 1
    ? list.listed.all(token.id, token.team_id, limit + 1)
    : list.team.all(token.team_id, limit + 1)) as ListRow[];
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const body = JSON.stringify({
    data: page.map(([id, name, serverId, parentId, state, revision, port, publishedHost, createdAt, updatedAt]) => ({
      id, name, server_id: serverId, parent_id: parentId, is_copy: parentId !== null,
      state, revision, url: urlOf(state, port, publishedHost), created_at: createdAt, updated_at: updatedAt,
    })),
    next_cursor: rows.length > limit ? Buffer.from(page[page.length - 1]![0]).toString('base64url') : null,
  });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  response.end(body);
});
listenUntilStopped(server, () => db.close());
