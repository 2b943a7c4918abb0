// The ERP application's own database: a few business tables with seeded rows and the user
// accounts (one with login `admin`). Created on first open, so provisioning and a first start
// on an old service both end with the same database.
import { randomBytes, scryptSync } from 'node:crypto';
import SQLite from 'better-sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY, login TEXT NOT NULL UNIQUE, name TEXT NOT NULL, email TEXT NOT NULL,
  password_hash TEXT NOT NULL, active INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, city TEXT);
CREATE TABLE IF NOT EXISTS products (
  id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL, price_cents INTEGER NOT NULL, stock INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sales_orders (
  id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers (id), ordered_on TEXT NOT NULL,
  total_cents INTEGER NOT NULL, state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS password_resets (
  id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users (id), token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, used_at TEXT
);
-- Every email the application tried to send, and what became of it (sent, failed, not_sent).
CREATE TABLE IF NOT EXISTS outgoing_mail (
  id INTEGER PRIMARY KEY, recipient TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL,
  state TEXT NOT NULL, reason TEXT, created_at TEXT NOT NULL
);`;

/** Tables every ERP database has; a restore refuses a file without them (it is not one of ours). */
export const ERP_CORE_TABLES = ['users', 'customers', 'products', 'sales_orders'] as const;

const CUSTOMERS = [
  ['Acme Tools', 'orders@acme.example', 'Brussels'], ['Globex', 'buying@globex.example', 'Ghent'],
  ['Initech', 'ap@initech.example', 'Liège'], ['Umbrella Retail', 'shop@umbrella.example', 'Antwerp'],
  ['Stark Supplies', 'desk@stark.example', 'Namur'],
] as const;

const PRODUCTS = [
  ['DESK-01', 'Standing desk', 49900, 12], ['CHAIR-02', 'Office chair', 18900, 40], ['LAMP-03', 'Desk lamp', 3900, 85],
  ['SHELF-04', 'Bookshelf', 12900, 9], ['MAT-05', 'Floor mat', 2900, 120],
] as const;

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64')}$${scryptSync(password, salt, 32).toString('base64')}`;
}

/** Stored instead of a hash: no password matches it, so the account is reached only through a reset. */
export const NO_PASSWORD = '!';

/** Opens (creating and seeding when new) the database at `file`. */
export function openErpDatabase(file: string): SQLite.Database {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);
  const seeded = db.prepare('SELECT count(*) AS count FROM users').get() as { count: number };
  if (seeded.count === 0) seed(db);
  return db;
}

function seed(db: SQLite.Database): void {
  db.transaction(() => {
    // No password yet: an account is first taken over through the reset flow. (Also keeps
    // provisioning fast: no password hashing while the control plane creates the database.)
    const user = db.prepare('INSERT INTO users (login, name, email, password_hash) VALUES (?, ?, ?, ?)');
    user.run('admin', 'Administrator', 'admin@example.com', NO_PASSWORD);
    user.run('accountant', 'Accountant', 'accounting@example.com', NO_PASSWORD);
    const customer = db.prepare('INSERT INTO customers (name, email, city) VALUES (?, ?, ?)');
    for (const row of CUSTOMERS) customer.run(...row);
    const product = db.prepare('INSERT INTO products (sku, name, price_cents, stock) VALUES (?, ?, ?, ?)');
    for (const row of PRODUCTS) product.run(...row);
    const order = db.prepare('INSERT INTO sales_orders (customer_id, ordered_on, total_cents, state) VALUES (?, ?, ?, ?)');
    order.run(1, '2024-03-01', 53800, 'invoiced');
    order.run(2, '2024-03-04', 18900, 'confirmed');
    order.run(3, '2024-03-09', 7800, 'draft');
    order.run(1, '2024-03-12', 12900, 'confirmed');
  })();
}
