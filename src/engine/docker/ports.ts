// The host port a new container publishes on. The engine's own choice (HostPort "") would move
// the service's url at every restart, so we choose once and keep it: on this machine a port
// that is free now, elsewhere one that none of our services holds (a program of the host
// that holds it makes the start choose again).
import { randomInt } from 'node:crypto';
import { allocateLoopbackPort } from '../local/ports.js';
import type { EngineAddress } from './engine-address.js';

const REMOTE_RANGE = { from: 20_000, to: 40_000 };

export async function choosePort(address: EngineAddress, taken: ReadonlySet<number>): Promise<number> {
  if (address.kind === 'unix') return allocateLoopbackPort('127.0.0.1', taken);
  for (;;) {
    const port = randomInt(REMOTE_RANGE.from, REMOTE_RANGE.to);
    if (!taken.has(port)) return port;
  }
}
