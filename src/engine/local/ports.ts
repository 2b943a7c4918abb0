// Loopback ports for services. The OS picks a free one; ports other services already hold
// (running or not: a stopped service keeps its address) and ports being handed out right now
// in this process are skipped.
import { createServer } from 'node:net';

const handingOut = new Set<number>();

export async function allocateLoopbackPort(host: string, taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await osFreePort(host);
    if (taken.has(port) || handingOut.has(port)) continue;
    handingOut.add(port);
    // Long enough for the process it is meant for to bind it.
    setTimeout(() => handingOut.delete(port), 30_000).unref();
    return port;
  }
  throw new Error('no free loopback port found after 50 attempts');
}

export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

function osFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error('the OS gave no port'))));
    });
  });
}
