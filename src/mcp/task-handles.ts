// Task ids: the operation (or decision) a task is, bound to the token that started it.
// A task is our operation, so its id names it: `<operation id>.<MAC>`, the MAC keyed by the id
// of the token that made the call (as session-binding.ts does for sessions). Why not the bare
// operation id: a token with services:read reaches every operation of its team, and a task
// handle must be refused to any token but the one that started it (as not found), with nothing
// kept in memory, since any node may answer the next poll. Reading the task still goes through
// invoke() with the caller's own token (task-handlers.ts): the handle binds, it grants nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 16;
/** What a task can be: an operation or a decision, by the prefix of its id. */
const TARGET = /^(op|dec)_[0-9a-z]{1,40}$/;

export function taskIdOf(targetId: string, tokenId: string): string {
  return `${targetId}.${macOf(targetId, tokenId).toString('base64url')}`;
}

/** The operation or decision id a task id names, when this same token started the task; else undefined. */
export function targetOfTask(taskId: string, tokenId: string): string | undefined {
  const [targetId, mac, extra] = taskId.split('.');
  if (!targetId || !mac || extra !== undefined || !TARGET.test(targetId)) return undefined;
  const presented = Buffer.from(mac, 'base64url');
  const expected = macOf(targetId, tokenId);
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? targetId : undefined;
}

function macOf(targetId: string, tokenId: string): Buffer {
  return createHmac('sha256', `teaminfra mcp task:${tokenId}`).update(targetId).digest().subarray(0, MAC_BYTES);
}
