// Rows built from better-sqlite3's raw mode (src/db/raw-rows.ts) are the rows its object mode
// returns: same keys in the same order, same values, a later column of the same name winning.
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { rowBuilderOf } from '../../src/db/raw-rows.js';

describe('rowBuilderOf', () => {
  const sqlite = new SQLite(':memory:');
  const objectRowsAndBuilt = (sql: string) => {
    const rows = sqlite.prepare(sql).all() as Record<string, unknown>[];
    const statement = sqlite.prepare(sql).raw(true);
    const rowOf = rowBuilderOf(statement.columns().map((column) => column.name));
    return { rows, built: (statement.all() as unknown[][]).map(rowOf) };
  };

  it('builds the row object mode returns when columns have every kind of value', () => {
    const { rows, built } = objectRowsAndBuilt(`SELECT 'a' AS id, NULL AS parent_id, 3 AS revision, 1.5 AS ratio, x'00ff' AS bytes, 'x"y\\z' AS "odd ""name"""`);
    expect(built).toEqual(rows);
    expect(built.map((row) => Object.keys(row))).toEqual(rows.map((row) => Object.keys(row)));
    expect(JSON.stringify(built)).toBe(JSON.stringify(rows));
  });

  it('keeps the later value and the first position when two columns share a name', () => {
    const { rows, built } = objectRowsAndBuilt(`SELECT 1 AS id, 2 AS name, 3 AS id`);
    expect(built).toEqual([{ id: 3, name: 2 }]);
    expect(JSON.stringify(built)).toBe(JSON.stringify(rows));
  });

  it('does not run a column name as code', () => {
    const { rows, built } = objectRowsAndBuilt(`SELECT 1 AS "a: 1 }; throw new Error('ran'); ({ b"`);
    expect(built).toEqual(rows);
  });
});
