// Baseline (d)'s two reads, for servers/sdk-floor.ts and for profile-mcp-steps.ts (which times
// each step of ours beside (d)'s in one process): the token by its SHA-256 with the checks (d)
// makes, and the page of services (the rows (c) reads) as the answer's objects, built once from raw rows.
// Written against schema.sql, not against our src/db.
import { createHash } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import { listStatements, type ListRow } from './list-statements.js';

export interface FloorToken { id: string; team_id: string; expires_on: string | null; accepted_by: string; restrict_services: number; revoked_at: string | null; plan: string }
const PLANS_WITH_API = new Set(['starter', 'business', 'enterprise']);

function urlOf(state: string, port: number | null, publishedHost: string | null): string | null {
  if (port === null || state !== 'running') return null;
  const host = publishedHost ?? '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
}

export function floorReads(db: SQLite.Database) {
  // `+?`: a value the planner does not read, so the join is not planned again at every run (list-statements.ts).
  const findToken = db.prepare(`
    SELECT t.id, t.team_id, t.expires_on, t.accepted_by, t.restrict_services, t.revoked_at, team.plan
    FROM api_tokens t JOIN teams team ON team.id = t.team_id WHERE t.token_hash = +?`);
  const list = listStatements(db);

  /** The token's row, when it may use MCP now (the expiry read as a UTC day: the bench token expires next year). */
  function tokenOf(authorization: string | undefined): FloorToken | undefined {
    if (!authorization?.startsWith('Bearer ')) return undefined;
    const token = findToken.get(createHash('sha256').update(authorization.slice(7)).digest('hex')) as FloorToken | undefined;
    if (!token || token.revoked_at !== null || token.accepted_by === 'api' || !PLANS_WITH_API.has(token.plan)) return undefined;
    if (token.expires_on !== null && token.expires_on < new Date().toISOString().slice(0, 10)) return undefined;
    return token;
  }

  function listServices(token: FloorToken, limit: number) {
    const rows = (token.restrict_services === 1 ? list.listed.all(token.id, token.team_id, limit + 1) : list.team.all(token.team_id, limit + 1)) as ListRow[];
    const page = rows.length > limit ? rows.slice(0, limit) : rows;
    return {
      data: page.map(([id, name, serverId, parentId, state, revision, port, publishedHost, createdAt, updatedAt]) => ({
        id, name, server_id: serverId, parent_id: parentId, is_copy: parentId !== null,
        state, revision, url: urlOf(state, port, publishedHost), created_at: createdAt, updated_at: updatedAt,
      })),
      next_cursor: rows.length > limit ? Buffer.from(page[page.length - 1]![0]).toString('base64url') : null,
    };
  }

  return { tokenOf, listServices };
}
