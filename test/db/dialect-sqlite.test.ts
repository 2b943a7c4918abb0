// The SQLite dialect writes each bound value `+?` (src/db/dialect-sqlite.ts): checked here on a
// real SQLite database, against Kysely's own dialect writing `?`, that every kind of value is
// stored, compared and returned the same way. The index each of our queries uses with it is held
// by query-plans.test.ts.
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sql, type Kysely as KyselyType } from 'kysely';
import { SQLITE_PARAMETER, StablePlanSqliteDialect } from '../../src/db/dialect-sqlite.js';
import { Kysely, SqliteDialect } from '../../src/db/kysely-runtime.js';

interface Values { id: number; text_column: string | null; integer_column: number | null; real_column: number | null; blob_column: Buffer | null; any_column: unknown }
interface TestTables { value_table: Values }

const opened: SQLite.Database[] = [];
afterEach(() => { for (const database of opened.splice(0)) database.close(); });

function databaseWith(dialect: 'stable' | 'kysely'): { db: KyselyType<TestTables>; sqlite: SQLite.Database } {
  const sqlite = new SQLite(':memory:');
  opened.push(sqlite);
  sqlite.exec(`CREATE TABLE value_table (id INTEGER PRIMARY KEY, text_column TEXT, integer_column INTEGER,
    real_column REAL, blob_column BLOB, any_column)`);
  const config = { database: sqlite };
  return { db: new Kysely<TestTables>({ dialect: dialect === 'stable' ? new StablePlanSqliteDialect(config) : new SqliteDialect(config) }), sqlite };
}

const ROWS: Values[] = [
  { id: 1, text_column: 'plain', integer_column: 1, real_column: 1.5, blob_column: Buffer.from([0, 1, 2]), any_column: 'text' },
  { id: 2, text_column: '42', integer_column: 0, real_column: -0.25, blob_column: null, any_column: 7 },
  // A number into a TEXT column (better-sqlite3 binds a JS number as a double) and a numeric string
  // into INTEGER and REAL: the columns' affinity converts them.
  { id: 3, text_column: 5 as unknown as string, integer_column: '12' as unknown as number, real_column: '3' as unknown as number, blob_column: null, any_column: Buffer.from('x') },
  { id: 4, text_column: null, integer_column: null, real_column: null, blob_column: null, any_column: null },
];

async function filled(dialect: 'stable' | 'kysely') {
  const database = databaseWith(dialect);
  await database.db.insertInto('value_table').values(ROWS).execute();
  return database;
}

/** What SQLite stored: each value and its storage class. */
function stored(sqlite: SQLite.Database): unknown[] {
  return sqlite.prepare(`SELECT *, typeof(text_column) t, typeof(integer_column) i, typeof(real_column) r, typeof(blob_column) b,
    typeof(any_column) a FROM value_table ORDER BY id`).all();
}

describe('the SQLite dialect', () => {
  it('writes every bound value as +?, in a WHERE, an IN list, a LIMIT, an INSERT and an UPDATE', () => {
    const { db } = databaseWith('stable');
    const select = db.selectFrom('value_table').select('id').where('text_column', '=', 'a').where('id', 'in', [1, 2])
      .orderBy('id').limit(10).offset(2).compile();
    expect(select.sql).toBe(`select "id" from "value_table" where "text_column" = ${SQLITE_PARAMETER} and "id" in (+?, +?) order by "id" limit +? offset +?`);
    expect(select.parameters).toEqual(['a', 1, 2, 10, 2]);
    expect(db.insertInto('value_table').values({ id: 9, text_column: 'b' }).compile().sql)
      .toBe('insert into "value_table" ("id", "text_column") values (+?, +?)');
    expect(db.updateTable('value_table').set({ real_column: 2 }).where('id', '=', 9).compile().sql)
      .toBe('update "value_table" set "real_column" = +? where "id" = +?');
    expect(sql`select ${'x'} as value`.compile(db).sql).toBe('select +? as value');
  });

  it('stores each kind of value, and converts it by the column affinity, as a bare parameter does', async () => {
    const stable = await filled('stable');
    const bare = await filled('kysely');
    expect(stored(stable.sqlite)).toEqual(stored(bare.sqlite));
    // The conversions above did happen, so the comparison is not of two empty tables.
    expect(stored(stable.sqlite)[2]).toMatchObject({ text_column: '5.0', t: 'text', integer_column: 12, i: 'integer', r: 'real', a: 'blob' });
  });

  it('compares by the column affinity as a bare parameter does, NULL and blobs included', async () => {
    const stable = await filled('stable');
    const bare = await filled('kysely');
    const comparisons: [keyof Values, '=' | '>' | 'is', unknown][] = [
      ['text_column', '=', 5], ['text_column', '=', '5'], ['text_column', '>', 40], ['integer_column', '=', '12'],
      ['integer_column', '=', 1], ['real_column', '>', '1'], ['blob_column', '=', Buffer.from([0, 1, 2])],
      ['any_column', '=', 7], ['any_column', '=', '7'], ['any_column', 'is', null], ['text_column', 'is', null],
    ];
    const idsWhere = async ({ db }: { db: KyselyType<TestTables> }, column: keyof Values, operator: '=' | '>' | 'is', value: unknown) =>
      (await db.selectFrom('value_table').select('id').where(column, operator, value as never).orderBy('id').execute()).map((row) => row.id);
    for (const [column, operator, value] of comparisons) {
      expect(await idsWhere(stable, column, operator, value), `${column} ${operator} ${String(value)}`).toEqual(await idsWhere(bare, column, operator, value));
    }
    // A comparison that converts finds its row, so the ones above are not of two empty answers.
    expect(await idsWhere(stable, 'text_column', '=', 5)).toEqual([3]);
  });

  it('returns a bound value unchanged, whatever its kind', async () => {
    const { db } = databaseWith('stable');
    const blob = Buffer.from([255, 0, 7]);
    const row = await sql<{ t: string; i: number; r: number; b: Buffer; n: null; big: number }>`select ${'text'} as t, ${-3} as i,
      ${2.5} as r, ${blob} as b, ${null} as n, ${2 ** 40} as big`.execute(db);
    expect(row.rows[0]).toEqual({ t: 'text', i: -3, r: 2.5, b: blob, n: null, big: 2 ** 40 });
  });
});
