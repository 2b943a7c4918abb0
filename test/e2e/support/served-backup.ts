// What the restore suites through `teaminfra serve` start from: serve running on a data
// directory whose one ERP service runs and has one backup, and how to leave nothing behind.
import { rmSync } from 'node:fs';
import { expect } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../src/db/connect.js';
import { startServe, type ServeProcess } from '../../support/cli.js';
import { act, killProcessesMatching } from '../../engine/support/engine-http.js';
import { countProducts, serviceDatabase } from '../../engine/support/service-data.js';

export interface ServedBackup {
  serve: ServeProcess;
  db: SqliteDb;
  /** The service's own database file, read by the suites to see what a restore did. */
  database: string;
  backupId: string;
  productsInBackup: number;
}

/** Starts serve, starts the service with `token` and backs it up. */
export async function serveWithBackup(dataDir: string, ids: { serverId: string; serviceId: string }, token: string): Promise<ServedBackup> {
  const db = openDatabase(dataDir);
  const database = serviceDatabase(dataDir, ids.serverId, ids.serviceId);
  const serve = await startServe(dataDir);
  expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${ids.serviceId}/start`)).state).toBe('succeeded');
  const backup = await act(serve.baseUrl, token, 'POST', `/api/service-erp/${ids.serviceId}/backups`);
  expect(backup.state).toBe('succeeded');
  const productsInBackup = countProducts(database);
  expect(productsInBackup).toBeGreaterThan(0);
  return { serve, db, database, backupId: backup.backup_id as string, productsInBackup };
}

/** Kills serve and every process of the data directory, and removes it. */
export async function leaveNothingBehind(dataDir: string, serve: ServeProcess | undefined, db: SqliteDb | undefined): Promise<void> {
  await serve?.stop('SIGKILL');
  await db?.close();
  await killProcessesMatching(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}
