// A TCP proxy in front of the test registry that stops forwarding once `budget` bytes have gone
// from the registry to the engine, the connections left open and silent: a pull stalled mid-way,
// as a registry or a network that hangs does it. Until then it forwards both ways unchanged.
import { connect, createServer, type Socket } from 'node:net';

export interface StallingProxy {
  /** 127.0.0.1:PORT, as image names start with it. */
  host: string;
  /** True once the budget was spent and forwarding stopped. */
  readonly stalled: boolean;
  close(): Promise<void>;
}

export async function startStallingProxy(targetPort: number, budget: number): Promise<StallingProxy> {
  const sockets = new Set<Socket>();
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
