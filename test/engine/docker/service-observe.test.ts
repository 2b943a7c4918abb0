// A Docker service's logs and metrics, against the real engine: the lines its container printed
// (on stdout and stderr) come back in order, labelled by container, with the engine's time,
// tail and a cursor; control characters come back escaped. A running container reports memory
// and its data volume's size; a stopped one its state and no CPU.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { act, send } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import { startDockerTeam, type DockerTeam } from './support/docker-team.js';
import { listAppContainers } from '../../../src/engine/docker/app-containers.js';
import { demultiplex } from '../../../src/engine/docker/containers.js';

describe.runIf(dockerAvailable)('logs and metrics of a service on a Docker server', () => {
  const api = testDockerApi();
  let docker: DockerTeam;
  let serverId: string;
  let serviceId: string;
  const get = (path: string) => send(docker.server.baseUrl, 'GET', `/api/service-erp/${serviceId}${path}`, docker.token);

  /** Prints each text on the container's own stdout (1) or stderr (2), PID 1's, from a process run in it (the image has node, no shell). */
  async function printInContainer(writes: [1 | 2, string][]): Promise<void> {
    const [container] = (await listAppContainers(api, serviceId)).filter((each) => each.running);
    const script = "for (const [fd, text] of JSON.parse(process.argv[1])) require('fs').writeFileSync('/proc/1/fd/' + fd, text)";
    const exec = await api.json<{ Id: string }>('POST', `/containers/${container?.id}/exec`, {
      body: { Cmd: ['/usr/local/bin/node', '-e', script, JSON.stringify(writes)] },
    });
    await api.json('POST', `/exec/${exec.Id}/start`, { body: { Detach: true } });
    const deadline = Date.now() + 10_000;
    while ((await api.json<{ Running: boolean }>('GET', `/exec/${exec.Id}/json`)).Running) {
      if (Date.now() > deadline) throw new Error('the exec did not end within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The engine copies each stream into its log on its own, and can do so after the exec has
    // ended. Wait until every line is there.
    const written = writes.map(([, text]) => text);
    let logged = await containerLog(container!.id, writes.length + 20);
    while (!written.every((text) => logged.includes(text))) {
      if (Date.now() > deadline) throw new Error(`the container's log did not show what was written within 10 s: ${JSON.stringify(logged.slice(-500))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      logged = await containerLog(container!.id, writes.length + 20);
    }
  }

  /** The last `tail` lines of the container's own log, as the engine keeps it. */
  async function containerLog(id: string, tail: number): Promise<string> {
    const log = await api.stream('GET', `/containers/${id}/logs`, { query: { stdout: 1, stderr: 1, tail }, timeoutMs: 5_000 });
    const chunks: Buffer[] = [];
    for await (const chunk of log) chunks.push(chunk as Buffer);
    return demultiplex(Buffer.concat(chunks));
  }

  beforeAll(async () => {
    docker = await startDockerTeam();
    serverId = await docker.addServer('docker-observe');
    const created = await act(docker.server.baseUrl, docker.token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Observed' });
    serviceId = created.service_id;
    expect(await act(docker.server.baseUrl, docker.token, 'POST', `/api/service-erp/${serviceId}/start`, undefined)).toMatchObject({ state: 'succeeded' });
  }, 300_000);
  afterAll(async () => {
    await docker?.server.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  });

  it('answers the lines its container printed, in order, labelled by container, with tail and a cursor that reads on', async () => {
    // The engine stamps each stream's lines as it reads that stream: lines printed on stdout and
    // stderr in the same instant can be stamped in either order. The stderr line is printed once
    // the others are in the log, so that it is the latest by the engine's time too.
    await printInContainer([1, 2, 3, 4, 5, 6].map((n): [1, string] => [1, `known line ${n}\n`]));
    await printInContainer([[2, 'to stderr\n']]);
    const latest = await get('/logs?tail=3');
    expect(latest.status).toBe(200);
    expect(latest.body.lines.map((line: { text: string }) => line.text)).toEqual(['known line 5', 'known line 6', 'to stderr']);
    // The server image's one container, as its one-service definition names it (contract-definition.ts).
    expect(latest.body.lines[0].container).toBe('erp');
    expect(Date.parse(latest.body.lines[0].at)).toBeGreaterThan(Date.now() - 120_000);
    const all = await get('/logs');
    const texts = all.body.lines.map((line: { text: string }) => line.text);
    expect(texts.at(0)).toContain('listening on port');
    expect(texts.slice(-7)).toEqual(['known line 1', 'known line 2', 'known line 3', 'known line 4', 'known line 5', 'known line 6', 'to stderr']);

    await printInContainer([[1, 'after 1\n'], [1, 'after 2\n'], [1, 'after 3\n']]);
    const page = await get(`/logs?tail=2&since=${encodeURIComponent(latest.body.next_cursor)}`);
    expect(page.body.lines.map((line: { text: string }) => line.text)).toEqual(['after 1', 'after 2']);
    expect(page.body.more).toBe(true);
    const rest = await get(`/logs?since=${encodeURIComponent(page.body.next_cursor)}`);
    expect(rest.body).toMatchObject({ lines: [{ text: 'after 3' }], more: false });
    const since = await get(`/logs?since=${encodeURIComponent(page.body.lines[0].at)}`);
    expect(since.body.lines.map((line: { text: string }) => line.text)).toEqual(['after 1', 'after 2', 'after 3']);
  });

  it('escapes the control characters a container prints', async () => {
    const before = await get('/logs?tail=1');
    await printInContainer([[1, 'red \u001b[31malert\u001b[0m bell\u0007 back\rover\n']]);
    const page = await get(`/logs?since=${encodeURIComponent(before.body.next_cursor)}`);
    expect(page.body.lines.map((line: { text: string }) => line.text)).toEqual(['red \\x1b[31malert\\x1b[0m bell\\x07 back\\x0dover']);
  });

  it('reports a running service\'s memory and data size, then a stopped one\'s state without CPU', async () => {
    const running = await get('/metrics');
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ state: 'running', running: true, restarts: 0 });
    expect(running.body.memory_bytes).toBeGreaterThan(1_000_000);
    expect(running.body.memory_limit_bytes).toBeGreaterThan(running.body.memory_bytes);
    expect(running.body.data_bytes).toBeGreaterThan(0);
    expect(running.body.cpu).toMatchObject({ percent: expect.any(Number), window_seconds: expect.any(Number) });
    expect(running.body.cpu.window_seconds).toBeGreaterThanOrEqual(1);
    expect(await act(docker.server.baseUrl, docker.token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
    const stopped = await get('/metrics');
    expect(stopped.body).toMatchObject({ state: 'stopped', running: false, cpu: null, memory_bytes: null });
    expect(stopped.body.data_bytes).toBeGreaterThan(0);
    // A stopped container's log is still there to read.
    expect((await get('/logs?tail=1')).body.lines).toHaveLength(1);
  });
});
