// What an action (src/engine/actions.ts and src/engine/actions/*) is given and answers: in a file
// of their own, so that the table of actions and the actions it lists do not import each other.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import type { BackupFile, ServiceDriver } from '../driver.js';
import type { ServiceChange } from '../state-changes.js';

export interface ActionContext {
  db: Kysely<Database>;
  driver: ServiceDriver;
  operation: OperationRow;
  /** The control plane's data directory: backups are kept under it. */
  dataDir: string;
  newServersDockerHost: string | null;
  /** Opens what a restore from off-site needs (the destination's secret, the team's backup key); absent: no restore reads from off-site. */
  secrets?: SecretBox;
}

export interface ActionResult {
  result: object;
  service?: ServiceChange;
  server?: { state: 'ready'; rootDir: string };
  /** Other services (a deleted service's copies) deleted along with it. */
  alsoDeleted?: string[];
  /** The backup the operation wrote. */
  backup?: { id: string; file: BackupFile };
}
