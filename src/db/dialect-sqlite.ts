// SQLite: Kysely's SqliteDialect, with each bound value written `+?` instead of `?`.
//
// Why: SQLite's planner reads the value bound to a parameter when it plans a `LIMIT ?` and,
// since 3.54, an equality in a query that joins tables or orders its rows (`t.token_hash = ?`
// beside a join, `s.team_id = ?` before ORDER BY), and then marks the statement to be planned
// again when that parameter is bound anew. better-sqlite3 clears a statement's bindings after
// every run, which expires such a statement: it was parsed and planned again at every run,
// prepared once or not. That was about 9 us of the token lookup (12.5 against 4.5) and 10 us of a
// page of services (23 against 13.5), the two reads of every MCP or REST call, and a second
// prepare for every such query Kysely runs.
// Unary plus is a no-op on any value (text, number, blob, NULL) and, like a bare parameter, has
// no affinity, so comparisons and stored values are unchanged; the planner does not look through
// it, so the plan no longer depends on the value and the statement stays prepared. It only gives
// up plans that depend on a value: a LIKE prefix on an index (none of ours uses one) and STAT4
// samples (never collected here). test/db/query-plans.test.ts holds the index each query uses,
// with the SQL this dialect writes; src/mcp/README.md ("Ours against (d)") tells how this was
// found and what it saved.
import type { QueryCompiler } from 'kysely';
import { SqliteDialect, SqliteQueryCompiler } from './kysely-runtime.js';

/** `+?`: see above. */
export const SQLITE_PARAMETER = '+?';

class StablePlanSqliteQueryCompiler extends SqliteQueryCompiler {
  protected override getCurrentParameterPlaceholder(): string {
    return SQLITE_PARAMETER;
  }
}

export class StablePlanSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): QueryCompiler {
    return new StablePlanSqliteQueryCompiler();
  }
}
