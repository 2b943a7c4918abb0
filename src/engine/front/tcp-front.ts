// The front of a Docker service: the one container published on the service's port, so that its
// url never moves. It forwards each TCP connection, untouched (HTTP, websockets, anything), to
// the host name `current` on the service's front network, at TEAMINFRA_FRONT_TARGET_PORT. The
// driver makes a revision current by connecting its container to that network with the alias
// `current` and then disconnecting the previous one (src/engine/docker/service-front.ts): the
// name is resolved per connection, so a switch needs no signal and survives a restart.
// Runs in the bundled ERP image (erp-image.ts), as PID 1: Node's own modules only.
import { lookup } from 'node:dns/promises';
import { createServer, connect, type Socket } from 'node:net';

// The port and name are fixed in the image; a test runs the program on a host of its own.
const LISTEN_PORT = Number(process.env.TEAMINFRA_FRONT_LISTEN_PORT) || 8080;
const TARGET_HOST = process.env.TEAMINFRA_FRONT_TARGET_HOST || 'current';
// A revision's address answers a connection in well under a second. One that does not is an
// address just switched away from (a removed container's, still in a cache for a moment): a SYN
// to it would wait for TCP's own timeout, minutes, with the client hanging on. So each address
// gets this long, then the next one, then a fresh lookup, a few times.
const CONNECT_TIMEOUT_MS = 1_500;
const LOOKUPS = 4;
/** How long a client may take to read an answer its revision has finished sending. */
const DRAIN_MS = 120_000;
const targetPort = Number(process.env.TEAMINFRA_FRONT_TARGET_PORT);
if (!Number.isInteger(targetPort) || targetPort <= 0 || targetPort > 65_535) {
  console.error('TEAMINFRA_FRONT_TARGET_PORT must name the port of the service container.');
  process.exit(2);
}

/** A connection to one address, or null when it fails or does not answer in time. */
function connectTo(address: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port: targetPort });
    const timer = setTimeout(() => { socket.destroy(); resolve(null); }, CONNECT_TIMEOUT_MS);
    socket.once('connect', () => { clearTimeout(timer); resolve(socket); });
    socket.once('error', () => { clearTimeout(timer); socket.destroy(); resolve(null); });
  });
}

/** The current revision, tried at every address its name has now, looked up again a few times. */
async function connectToCurrent(): Promise<Socket | null> {
  for (let attempt = 0; attempt < LOOKUPS; attempt++) {
    const addresses = await lookup(TARGET_HOST, { all: true }).catch(() => []);
    for (const { address } of addresses) {
      const socket = await connectTo(address);
      if (socket) return socket;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return null;
}

// Connections forwarded now, by the address of the revision each reaches. A revision switched
// away from is disconnected from the network and then removed: its end of a connection vanishes
// without a FIN, so a client that keeps its connection open (HTTP keep-alive) would send its next
// request into nothing and hang. Every second the name is looked up again, and the connections to
// an address it no longer has are closed: the client opens a new one, to the revision now current.
const openPairs = new Set<{ close(): void; address: string }>();
const SWEEP_MS = 1_000;
setInterval(() => {
  if (openPairs.size === 0) return;
  void lookup(TARGET_HOST, { all: true }).then((addresses) => {
    const current = new Set(addresses.map(({ address }) => address));
    for (const pair of openPairs) if (!current.has(pair.address)) pair.close();
  }, () => undefined);
}, SWEEP_MS).unref();

function forward(client: Socket): void {
  // Held until the revision answers: nothing the client sends meanwhile is lost.
  client.pause();
  let closed = false;
  client.on('error', () => { closed = true; client.destroy(); }).on('close', () => { closed = true; });
  void connectToCurrent().then((upstream) => {
    if (!upstream || closed) {
      upstream?.destroy();
      client.destroy();
      return;
    }
    // A side that fails takes the other down with it, and so does a client that leaves. A
    // revision that ends its side after its answer (a server that closes each connection) leaves
    // the client to read what is still on its way: pipe() ends the client once that is written.
    // Destroying it then would cut a large answer to a slow reader short.
    const close = () => { clearTimeout(drainTimer); client.destroy(); upstream.destroy(); openPairs.delete(pair); };
    const pair = { close, address: upstream.remoteAddress ?? '' };
    let drainTimer: NodeJS.Timeout | undefined;
    openPairs.add(pair);
    client.on('close', close);
    upstream.on('error', close).on('close', (hadError) => {
      if (hadError || client.destroyed) return close();
      openPairs.delete(pair);
      // A client that never reads the rest, or never closes its side, is let go of after a while.
      drainTimer = setTimeout(close, DRAIN_MS);
      drainTimer.unref();
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
}

const server = createServer({ noDelay: true }, forward);
server.listen(LISTEN_PORT, '0.0.0.0');
// PID 1 has no default signal handlers: without these, `docker stop` would wait its whole grace.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
