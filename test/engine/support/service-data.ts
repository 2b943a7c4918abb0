// Reads and changes an ERP service's own database from outside, as a person with a SQL client
// would: the file under the server's root (<data dir>/servers/<server>/<service>/erp.sqlite).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';

export function serviceDatabase(dataDir: string, serverId: string, serviceId: string): string {
  return join(dataDir, 'servers', serverId, serviceId, 'erp.sqlite');
}

export function countProducts(file: string): number {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS count FROM products').get() as { count: number }).count;
  } finally {
    db.close();
  }
}

/** Products: no other table refers to them, so they can go while the service runs. */
export function deleteProducts(file: string, keep = 0): void {
  const db = new SQLite(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('DELETE FROM products WHERE id NOT IN (SELECT id FROM products ORDER BY id LIMIT ?)').run(keep);
  } finally {
    db.close();
  }
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** GET with a bearer token (and a Range, when given); the body as bytes. */
export async function download(url: string, token: string | null, range?: string) {
  const response = await fetch(url, {
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(range ? { Range: range } : {}) },
  });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}
