// A TCP proxy in front of the test registry, for pulls that are slow or stall: it forwards what
// the registry sends at most `bytesPerSecond` fast, and stops forwarding for good once `budget`
// bytes have gone to the engine, the connections left open and silent, as a registry or a
// network that hangs does it. What the engine sends goes through unchanged.
import { connect, createServer, type Socket } from 'node:net';

export interface StallingProxy {
  /** 127.0.0.1:PORT, as image names start with it. */
  host: string;
  /** True once the budget was spent and forwarding stopped. */
  readonly stalled: boolean;
  close(): Promise<void>;
}

export async function startStallingProxy(targetPort: number, limits: { budget?: number; bytesPerSecond?: number }): Promise<StallingProxy> {
  const sockets = new Set<Socket>();
  const budget = limits.budget ?? Number.POSITIVE_INFINITY;
  let forwarded = 0;
  let stalled = false;
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const room = Math.max(0, budget - forwarded);
      if (room > 0) client.write(chunk.subarray(0, room));
      forwarded += Math.min(room, chunk.length);
      if (chunk.length > room) {
        stalled = true;
        upstream.pause();
      } else if (limits.bytesPerSecond) {
        // Held for as long as the chunk takes at that rate.
        upstream.pause();
        setTimeout(() => upstream.resume(), (chunk.length / limits.bytesPerSecond) * 1000).unref();
      }
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    host: `127.0.0.1:${port}`,
    get stalled() { return stalled; },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
