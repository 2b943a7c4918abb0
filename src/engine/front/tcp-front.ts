// The front of a Docker service: the one container published on the service's port, so that its
// url never moves. It forwards each TCP connection, untouched (HTTP, websockets, anything), to
// the host name `current` on the service's front network, at TEAMINFRA_FRONT_TARGET_PORT. The
// driver makes a revision current by connecting its container to that network with the alias
// `current` and then disconnecting the previous one (src/engine/docker/service-front.ts): the
// name is resolved per connection, so a switch needs no signal and survives a restart.
// Runs in the bundled ERP image (erp-image.ts), as PID 1: Node's own modules only.
import { createServer, connect, type Socket } from 'node:net';

const LISTEN_PORT = 8080;
const TARGET_HOST = 'current';
const targetPort = Number(process.env.TEAMINFRA_FRONT_TARGET_PORT);
if (!Number.isInteger(targetPort) || targetPort <= 0 || targetPort > 65_535) {
  console.error('TEAMINFRA_FRONT_TARGET_PORT must name the port of the service container.');
  process.exit(2);
}

function forward(client: Socket): void {
  const upstream = connect({ host: TARGET_HOST, port: targetPort });
  // A side that fails or ends takes the other down with it: no half-open pair is kept.
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
  client.pipe(upstream);
  upstream.pipe(client);
}

const server = createServer({ noDelay: true }, forward);
server.listen(LISTEN_PORT, '0.0.0.0');
// PID 1 has no default signal handlers: without these, `docker stop` would wait its whole grace.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
