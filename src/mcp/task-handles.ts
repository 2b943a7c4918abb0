// Task ids: the operation (or decision) a task is, bound to the token that started it.
// A task is our operation, so its id names it: `<operation id>.<MAC>`. Why not the bare
// operation id: a token with services:read reaches every operation of its team, and a task
// handle must be refused to any token but the one that started it (as not found), with nothing
// kept in memory, since any node may answer the next poll. The MAC covers the token's id and the
// operation's, keyed by a key derived from the secrets key (TEAMINFRA_SECRETS_KEY or the data
// directory's secrets.key, which every node shares), so that a handle cannot be made by anyone
// who only knows a token's id (ids appear in webhooks). Reading the task still goes through
// invoke() with the caller's own token (task-handlers.ts): the handle binds, it grants nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { loadSecretsKeys } from '../secrets/secrets-key.js';

const MAC_BYTES = 16;
/** What a task can be: an operation or a decision, by the prefix of its id. */
const TARGET = /^(op|dec)_[0-9a-z]{1,40}$/;

/** The keys handles are made with (the first) and still accepted with (all: after a rotation of the secrets key). */
export type TaskHandleKeys = readonly Buffer[];

const keysByDataDir = new Map<string, TaskHandleKeys>();

/** The handle keys of a data directory's secrets key and the previous ones, derived once per process. */
export function taskHandleKeys(dataDir: string): TaskHandleKeys {
  let keys = keysByDataDir.get(dataDir);
  if (!keys) {
    const { current, previous } = loadSecretsKeys(dataDir);
    keys = [current, ...previous].map((key) => createHmac('sha256', key.bytes).update('teaminfra mcp task handles').digest());
    keysByDataDir.set(dataDir, keys);
  }
  return keys;
}

export function taskIdOf(targetId: string, tokenId: string, keys: TaskHandleKeys): string {
  return `${targetId}.${macOf(keys[0]!, targetId, tokenId).toString('base64url')}`;
}

/** The operation or decision id a task id names, when this same token started the task; else undefined. */
export function targetOfTask(taskId: string, tokenId: string, keys: TaskHandleKeys): string | undefined {
  const [targetId, mac, extra] = taskId.split('.');
  if (!targetId || !mac || extra !== undefined || !TARGET.test(targetId)) return undefined;
  const presented = Buffer.from(mac, 'base64url');
  const matches = (key: Buffer) => {
    const expected = macOf(key, targetId, tokenId);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  };
  return keys.some(matches) ? targetId : undefined;
}

function macOf(key: Buffer, targetId: string, tokenId: string): Buffer {
  return createHmac('sha256', key).update(tokenId).update('\0').update(targetId).digest().subarray(0, MAC_BYTES);
}
