// The list of services as the hand-written baselines read it, (c) (hand-written.ts) and (d)
// (sdk-floor-reads.ts): "the same rows as (c)". Prepared once, raw mode; written against
// schema.sql, not against our src/db.
import type SQLite from 'better-sqlite3';

const COLUMNS = 's.id, s.name, s.server_id, s.parent_id, s.state, s.revision, s.port, s.published_host, s.created_at, s.updated_at';

/** A raw row, in COLUMNS' order. */
export type ListRow = [
  id: string, name: string, server_id: string, parent_id: string | null, state: string,
  revision: number, port: number | null, published_host: string | null, created_at: string, updated_at: string,
];

// Each bound value `+?`: the planner then does not read it, so the statement is not planned
// again at every run (src/db/dialect-sqlite.ts, which our queries go through, says why).
/** A token's services: those it lists when it is restricted, else its team's (top level, not deleted), in id order. */
export function listStatements(db: SQLite.Database) {
  return {
    // CROSS JOIN: SQLite keeps this table order (the token's list first).
    listed: db.prepare(`
      SELECT ${COLUMNS} FROM api_token_services l CROSS JOIN erp_services s
      WHERE l.token_id = +? AND s.id = l.service_id AND s.team_id = +? AND s.deleted_at IS NULL AND s.parent_id IS NULL
      ORDER BY l.service_id LIMIT +?`).raw(true),
    team: db.prepare(`
      SELECT ${COLUMNS} FROM erp_services s
      WHERE s.team_id = +? AND s.deleted_at IS NULL AND s.parent_id IS NULL
      ORDER BY s.id LIMIT +?`).raw(true),
  };
}
