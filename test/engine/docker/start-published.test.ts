// startPublished, against the real engine: a container published on a host port that another
// program already holds is replaced by one on a new port, and the port the engine published is
// the one answered; the container that could not start is removed.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/db/ids.js';
import { buildErpImage } from '../../../src/engine/docker/erp-image.js';
import { startPublished } from '../../../src/engine/docker/containers.js';
import { LABEL } from '../../../src/engine/docker/labels.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';

const listenOn = (port: number) => new Promise<Server>((resolve, reject) => {
  const server = createServer().once('error', reject);
  server.listen(port, '127.0.0.1', () => resolve(server));
});
const freePort = async () => {
  const server = await listenOn(0);
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
};

describe.runIf(dockerAvailable)('startPublished', () => {
  const api = testDockerApi();
  const serverId = newId('srv');
  let image: string;
  let holder: Server;

  beforeAll(async () => {
    image = (await buildErpImage(api)).image;
  }, 300_000);
  afterAll(async () => {
    holder?.close();
    await removeEverythingOf(api, serverId);
    await api.close();
  });

  it('makes a new container on a new port when another program holds the port, and answers the port published', async () => {
    const held = await freePort();
    holder = await listenOn(held);
    const assigned: number[] = [];
    const created: string[] = [];
    const { id, published } = await startPublished(api, {
      existingId: undefined, port: held, containerPort: 8080,
      choosePort: freePort, portAssigned: async (port) => { assigned.push(port); },
      create: async (port) => {
        const container = await api.json<{ Id: string }>('POST', '/containers/create', {
          body: {
            Image: image, Entrypoint: ['/usr/local/bin/node', '-e', 'setInterval(() => {}, 1000)'], Cmd: [],
            Labels: { [LABEL.serverId]: serverId, [LABEL.role]: 'helper' }, ExposedPorts: { '8080/tcp': {} },
            HostConfig: { PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: String(port) }] } },
          },
        });
        created.push(container.Id);
        return container.Id;
      },
    });
    expect(assigned).toHaveLength(2);
    expect(assigned[0]).toBe(held);
    expect(published).toBe(assigned[1]);
    expect(published).not.toBe(held);
    expect(created).toEqual([expect.any(String), id]);
    expect(await api.json('GET', `/containers/${created[0]}/json`, { accept: [404] })).toBeUndefined();
    const running = await api.json<{ State: { Running: boolean } }>('GET', `/containers/${id}/json`);
    expect(running.State.Running).toBe(true);
  });
});
