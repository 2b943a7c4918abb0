// The front program (src/engine/front/tcp-front.ts, compiled, as the ERP image runs it), run here
// on loopback in front of a server that, like trytond's, closes each connection once it has sent
// its answer: a client that reads a 24 MB answer slowly still gets every byte. (CI once saw such
// an answer cut short through a Tryton service's front; the front then destroyed the client's
// side as soon as the server closed, which drops whatever it had not yet written. This test did
// not catch that on loopback, where the kernel's buffers take the rest: it holds the behaviour.)
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/package-root.js';

const BODY_BYTES = 24 * 1024 * 1024;

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

describe('the front of a Docker service', () => {
  let upstream: Server;
  let front: ChildProcess;
  let frontPort: number;

  beforeAll(async () => {
    const body = Buffer.alloc(BODY_BYTES, 'x');
    // Reads a request, answers it whole, and closes the connection at once (HTTP/1.0 style).
    upstream = createServer((socket) => {
      socket.once('data', () => {
        socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY_BYTES}\r\nConnection: close\r\n\r\n`), body]));
      });
      socket.on('error', () => undefined);
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    frontPort = await freePort();
    front = spawn(process.execPath, [join(packageRoot, 'dist', 'src', 'engine', 'front', 'tcp-front.js')], {
      env: {
        ...process.env, TEAMINFRA_FRONT_LISTEN_PORT: String(frontPort), TEAMINFRA_FRONT_TARGET_HOST: '127.0.0.1',
        TEAMINFRA_FRONT_TARGET_PORT: String((upstream.address() as AddressInfo).port),
      },
      stdio: 'ignore',
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const socket = connect({ host: '127.0.0.1', port: frontPort });
      const connected = await new Promise<boolean>((resolve) => {
        socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
      });
      socket.destroy();
      if (connected) break;
      if (Date.now() > deadline) throw new Error('the front did not listen within 10 s');
      await sleep(50);
    }
  }, 20_000);

  afterAll(async () => {
    front?.kill('SIGTERM');
    upstream?.close();
  });

  it('passes on the whole of a large answer to a slow reader after the server has closed its side', async () => {
    const client = connect({ host: '127.0.0.1', port: frontPort });
    await once(client, 'connect');
    client.write('GET / HTTP/1.1\r\nHost: front\r\n\r\n');
    let received = 0;
    const deadline = Date.now() + 60_000;
    // A slow reader: 64 KB every 10 ms at most, so that the answer waits in the front until its end.
    client.pause();
    const ended = once(client, 'close');
    for (;;) {
      const chunk = client.read(64 * 1024) as Buffer | null;
      if (chunk) {
        received += chunk.length;
        await sleep(10);
        continue;
      }
      if (client.readableEnded || client.destroyed) break;
      if (Date.now() > deadline) throw new Error(`only ${received} bytes after 60 s`);
      await Promise.race([once(client, 'readable'), once(client, 'end'), sleep(500)]);
    }
    await ended;
    const headerBytes = `HTTP/1.1 200 OK\r\nContent-Length: ${BODY_BYTES}\r\nConnection: close\r\n\r\n`.length;
    expect(received).toBe(headerBytes + BODY_BYTES);
  }, 90_000);
});
