// The bundled image's snapshot and verify commands (the image contract's
// io.teaminfra.snapshot-command and io.teaminfra.verify-command), run by the Docker driver
// inside a container: `node data-command.js snapshot DATA_DIR TARGET_DIR` writes one
// consistent copy of the service's data to TARGET_DIR while the service keeps running;
// `node data-command.js verify DATA_DIR` exits 0 only if DATA_DIR holds an intact ERP database;
// `node data-command.js remove FILE...` removes backup files (the image has no rm), as `rm -f`.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkErpDatabase, snapshotDatabase } from '../local/database-snapshot.js';
import { DATABASE_FILE } from './config.js';
import { openErpDatabase } from './database.js';

async function main(): Promise<void> {
  const [command, dataDir, targetDir] = process.argv.slice(2);
  if (command === 'snapshot' && dataDir && targetDir) {
    mkdirSync(targetDir, { recursive: true });
    // A service that never ran still has a database: the one it would create on its first start.
    openErpDatabase(join(dataDir, DATABASE_FILE)).close();
    await snapshotDatabase(join(dataDir, DATABASE_FILE), join(targetDir, DATABASE_FILE));
    return;
  }
  if (command === 'verify' && dataDir) {
    checkErpDatabase(join(dataDir, DATABASE_FILE));
    return;
  }
  if (command === 'remove') {
    for (const file of process.argv.slice(3)) rmSync(file, { force: true });
    return;
  }
  throw new Error('usage: data-command.js snapshot DATA_DIR TARGET_DIR | verify DATA_DIR | remove FILE...');
}

main().catch((error: unknown) => {
  // One line: the driver quotes it as the reason.
  console.error((error as Error).message);
  process.exit(1);
});
