// `teaminfra admin set-backup-destination --team T --endpoint URL --region R --bucket B
// [--prefix P] --access-key-id K --secret-access-key-file F [--allow-private]`: a team's off-site
// backup destination, set by the operator (owners and admins set it in the panel; no token can).
// The secret is read from a file, never from the command line (where `ps` and shell histories
// show it), checked against the store (a test object written, read and deleted), kept sealed and
// never printed. The team's backup key, made with its first destination, is printed once, as
// {"backup_key": ...}, with the command that opens a downloaded object.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { findTeam } from '../db/repositories/teams.js';
import { DECRYPT_COMMAND } from '../offsite/backup-key.js';
import { DestinationRefusal, setBackupDestination } from '../offsite/destinations.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { operatorAudit } from './operator-audit.js';
import { parseOptions, required, secretFromFile } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'set-backup-destination';

async function setBackupDestinationCommand(
  db: Kysely<Database>, args: string[], _stdin: () => Promise<string>, secrets: () => Promise<SecretBox>,
): Promise<object> {
  const values = parseOptions(args, {
    team: { type: 'string' }, endpoint: { type: 'string' }, region: { type: 'string' }, bucket: { type: 'string' }, prefix: { type: 'string' },
    'access-key-id': { type: 'string' }, 'secret-access-key-file': { type: 'string' }, 'allow-private': { type: 'boolean' },
  }, COMMAND);
  const teamId = required(values, 'team', COMMAND);
  if (!(await findTeam(db, teamId))) throw new UsageError(`No team with id ${teamId}.`);
  const secretAccessKey = secretFromFile(required(values, 'secret-access-key-file', COMMAND), COMMAND, 'the secret access key');
  try {
    const saved = await setBackupDestination(db, await secrets(), teamId, {
      endpoint: required(values, 'endpoint', COMMAND), region: required(values, 'region', COMMAND), bucket: required(values, 'bucket', COMMAND),
      prefix: values.prefix ?? '', accessKeyId: required(values, 'access-key-id', COMMAND), secretAccessKey,
      allowPrivate: Boolean(values['allow-private']),
    });
    await operatorAudit(db, teamId, 'set_backup_destination', 'team', teamId);
    return {
      team_id: teamId, destination_id: saved.destinationId,
      ...(saved.backupKey ? {
        backup_key: saved.backupKey.identity, backup_key_recipient: saved.backupKey.recipient,
        decrypt: `Keep backup_key in key.txt, apart from the backups; it is not shown again. Open a downloaded object with: ${DECRYPT_COMMAND}`,
      } : {}),
    };
  } catch (error) {
    if (error instanceof DestinationRefusal) throw new UsageError(`${COMMAND}: ${error.message}`);
    throw error;
  }
}

export const BACKUP_DESTINATION_COMMANDS = { [COMMAND]: setBackupDestinationCommand };
