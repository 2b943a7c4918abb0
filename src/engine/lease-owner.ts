// Who holds an operation's lease: "<host>/<pid>/<nonce>". A lease normally has to expire before
// another worker may take the operation over; but on the same host we can see that its holder
// is dead (a crashed `teaminfra serve`), and take over at once instead of waiting.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { isAlive } from './local/process-control.js';

const thisHost = hostname().replace(/\//g, '_');
/** Owners alive in this process (several engines may share one process, e.g. in tests). */
const liveHere = new Set<string>();

export function newLeaseOwner(): string {
  const owner = `${thisHost}/${process.pid}/${randomBytes(4).toString('hex')}`;
  liveHere.add(owner);
  return owner;
}

export function retireLeaseOwner(owner: string): void {
  liveHere.delete(owner);
}

/** Owners whose liveness this host can judge start with this. */
export const LOCAL_OWNER_PREFIX = `${thisHost}/`;

/** True only when we can tell for sure that the holder is gone. */
export function isLeaseOwnerGone(owner: string | null): boolean {
  if (owner === null) return true;
  const [host, pidText] = owner.split('/');
  if (host !== thisHost) return false;
  const pid = Number(pidText);
  if (pid === process.pid) return !liveHere.has(owner);
  return !Number.isInteger(pid) || !isAlive(pid);
}
