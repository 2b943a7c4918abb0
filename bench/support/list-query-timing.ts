// The list query alone, in process: teaminfra's listReachableServices (its prepared fast path)
// against the statement the hand-written baseline (c) prepares (raw mode, as (c) reads it), on
// the same seeded database, in alternating rounds; each figure is the median of its rounds, so a busy moment of the shared
// machine does not land on one side only.
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
import { authenticate } from '../../src/core/authenticate.js';
import { DATABASE_FILE, openDatabase } from '../../src/db/connect.js';
import { listReachableServices } from '../../src/db/repositories/services.js';
import type { ListServicesFixture } from './seed.js';

const ROUNDS = 7;
const CALLS_PER_ROUND = 3000;

function microsPerCall(call: () => unknown): number {
  const started = performance.now();
  for (let i = 0; i < CALLS_PER_ROUND; i++) call();
  return ((performance.now() - started) * 1000) / CALLS_PER_ROUND;
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

export async function timeListQuery(dataDir: string, fixture: ListServicesFixture) {
  const db = openDatabase(dataDir);
  const handle = new SQLite(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const { reach } = await authenticate(db.kysely, fixture.token);
    const page = { limit: 50 };
    const ours = () => listReachableServices(db.kysely, reach, page, null);
    // As our dialect writes it, `+?` (src/db/dialect-sqlite.ts).
    const statement = handle.prepare(`
      SELECT s.id, s.name, s.server_id, s.parent_id, s.state, s.revision, s.port, s.published_host, s.created_at, s.updated_at
      FROM api_token_services l CROSS JOIN erp_services s
      WHERE l.token_id = +? AND s.id = l.service_id AND s.team_id = +? AND s.deleted_at IS NULL AND s.parent_id IS NULL
      ORDER BY l.service_id LIMIT +?`).raw(true);
    const handWritten = () => statement.all(fixture.tokenId, fixture.teamId, page.limit + 1) as unknown[][];
    const columns = statement.columns().map((column) => column.name);
    const [oursRows, handRows] = [await ours(), handWritten().map((row) => Object.fromEntries(columns.map((name, index) => [name, row[index]])))];
    if (JSON.stringify(oursRows) !== JSON.stringify(handRows)) throw new Error('the hand-written list query does not return the same rows as ours');
    // The fast path answers synchronously under its promise: time the call itself.
    const oursSync = () => { void ours(); };
    microsPerCall(oursSync);
    microsPerCall(handWritten);
    const oursRounds: number[] = [];
    const handRounds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) { oursRounds.push(microsPerCall(oursSync)); handRounds.push(microsPerCall(handWritten)); }
      else { handRounds.push(microsPerCall(handWritten)); oursRounds.push(microsPerCall(oursSync)); }
    }
    const oursMicros = median(oursRounds);
    const handWrittenMicros = median(handRounds);
    return { rows: oursRows.length, oursMicros, handWrittenMicros, handWrittenOverOurs: handWrittenMicros / oursMicros };
  } finally {
    handle.close();
    await db.close();
  }
}
