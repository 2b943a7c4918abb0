// A large ERP database for the backup and engine benchmarks, generated inside SQLite (fast, and
// the same tables the ERP application uses).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { openErpDatabase } from '../../src/engine/erp-app/database.js';

/** An ERP database of about `megabytes`: the seeded tables plus customers and orders, generated inside SQLite. */
export function fillDatabase(file: string, megabytes: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const db = openErpDatabase(file);
  try {
    const customers = 50_000;
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO customers (name, email, city)
      SELECT 'Customer ' || i || ' ' || hex(randomblob(4)), 'buyer' || i || '@example.com',
        CASE i % 5 WHEN 0 THEN 'Brussels' WHEN 1 THEN 'Ghent' WHEN 2 THEN 'Antwerp' WHEN 3 THEN 'Namur' ELSE 'Liège' END FROM n`).run(customers);
    const orders = db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO sales_orders (customer_id, ordered_on, total_cents, state)
      SELECT 1 + abs(random()) % ?, date('2020-01-01', '+' || (abs(random()) % 1500) || ' days'), abs(random()) % 1000000,
        CASE abs(random()) % 4 WHEN 0 THEN 'draft' WHEN 1 THEN 'confirmed' WHEN 2 THEN 'invoiced' ELSE 'paid' END FROM n`);
    const size = () => (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    while (size() < megabytes * 1e6) orders.run(200_000, customers);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

