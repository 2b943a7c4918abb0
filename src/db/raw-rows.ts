// Rows of a prepared SQLite statement, built from its raw mode. better-sqlite3 builds each row
// object in C++ one property at a time, which was measured at about 0.9 us a row of ten columns
// here (55 us for the 20-row service list, 38 us in raw mode); the same object built in JS from
// the raw values, with one object literal of the statement's columns, costs a tenth of that.
// Same keys in the same order, same values: a later column of the same name wins, as in
// better-sqlite3's own rows.

export type RowBuilder = (values: readonly unknown[]) => Record<string, unknown>;

/**
 * A function that turns one raw row of these columns into the row object better-sqlite3 would
 * have returned. Compiled once per statement: an object literal gets one hidden class for every
 * row, where adding properties one by one walks the transitions again each time. The names come
 * from our own SQL (the statement's column list), and are quoted as JSON string literals.
 */
export function rowBuilderOf(columns: readonly string[]): RowBuilder {
  const properties = columns.map((name, index) => `${JSON.stringify(name)}: values[${index}]`);
  return new Function('values', `return { ${properties.join(', ')} };`) as RowBuilder;
}
