// The containers of an app definition run by hand through the engine API, as the Docker
// driver will once it is wired to definitions: a user-defined network of the service's own
// (containers find each other by service name), one named volume per definition volume, each
// container with its rendered environment, and one-off containers for the definition's
// commands. Every object carries the test's labels, and every wait has a deadline.
import type { DockerApi } from '../../../../../src/engine/docker/docker-api.js';
import { labelFilter } from '../../../../../src/engine/docker/labels.js';
import type { AppCommand, AppContainer, AppDefinition } from '../../../../../src/engine/apps/app-definition.js';
import { renderEnvironment } from '../../../../../src/engine/apps/render-environment.js';

export const TEST_LABEL = 'io.teaminfra.test-run';

export class HandRun {
  readonly network: string;
  constructor(private readonly api: DockerApi, private readonly app: AppDefinition, readonly runId: string,
    private readonly values: Record<string, string>) {
    this.network = `teaminfra-test-${runId}`;
  }

  private get labels() {
    return { [TEST_LABEL]: this.runId };
  }

  volumeName(volume: string): string {
    return `teaminfra-test-${this.runId}-${volume}`;
  }

  async createNetwork(): Promise<void> {
    await this.api.json('POST', '/networks/create', { body: { Name: this.network, Driver: 'bridge', CheckDuplicate: true, Labels: this.labels } });
    for (const volume of this.app.volumes) {
      await this.api.json('POST', '/volumes/create', { body: { Name: this.volumeName(volume), Labels: this.labels } });
    }
  }

  container(name: string): AppContainer {
    const container = this.app.containers.find((each) => each.name === name);
    if (!container) throw new Error(`no service ${name}`);
    return container;
  }

  /** Creates and starts a service's container; the web-facing one is published on a loopback port. */
  async start(name: string): Promise<string> {
    const container = this.container(name);
    const web = name === this.app.web.service;
    const id = await this.create(`teaminfra-test-${this.runId}-${name}`, container, {
      Cmd: container.command ?? undefined, User: container.user ?? undefined,
      ExposedPorts: web ? { [`${this.app.web.port}/tcp`]: {} } : undefined,
      Healthcheck: container.healthcheck ? {
        Test: ['CMD', ...container.healthcheck.test], Interval: container.healthcheck.intervalMs * 1e6,
        Timeout: container.healthcheck.timeoutMs * 1e6, Retries: container.healthcheck.retries,
        StartPeriod: container.healthcheck.startPeriodMs * 1e6,
      } : undefined,
    }, web ? { [`${this.app.web.port}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: '' }] } : undefined, [name]);
    await this.api.json('POST', `/containers/${id}/start`, { accept: [304] });
    return id;
  }

  /** Runs a definition command as a one-off container of its service; resolves with its exit code and output. */
  async runCommand(command: AppCommand, options: { timeoutMs: number; workingDir?: string; extraMounts?: { volume: string; target: string }[] }) {
    const container = this.container(command.service);
    const id = await this.create(`teaminfra-test-${this.runId}-${command.service}-run-${Date.now()}`, container, {
      Cmd: command.command, User: command.user ?? container.user ?? undefined, WorkingDir: options.workingDir,
    }, undefined, [], options.extraMounts);
    try {
      await this.api.json('POST', `/containers/${id}/start`);
      const ended = await this.api.json<{ StatusCode: number }>('POST', `/containers/${id}/wait`, { timeoutMs: options.timeoutMs });
      return { exitCode: ended.StatusCode, output: await this.logs(id) };
    } finally {
      await this.api.json('DELETE', `/containers/${id}`, { query: { force: 1 }, accept: [404] });
    }
  }

  /** Waits until the engine reports the container's healthcheck as healthy; fails at the deadline or if it stops. */
  async waitHealthy(id: string, deadlineMs: number): Promise<void> {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const state = (await this.api.json<{ State: { Status: string; Health?: { Status: string } } }>('GET', `/containers/${id}/json`)).State;
      if (state.Health?.Status === 'healthy') return;
      if (state.Status !== 'running') throw new Error(`container ${id} is ${state.Status}: ${await this.logs(id)}`);
      if (Date.now() > until) throw new Error(`container ${id} not healthy within ${deadlineMs} ms (${state.Health?.Status}): ${await this.logs(id)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async publishedPort(id: string): Promise<number> {
    const inspected = await this.api.json<{ NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } }>('GET', `/containers/${id}/json`);
    return Number(inspected.NetworkSettings.Ports[`${this.app.web.port}/tcp`]![0]!.HostPort);
  }

  async logs(id: string): Promise<string> {
    const stream = await this.api.stream('GET', `/containers/${id}/logs`, { query: { stdout: 1, stderr: 1, tail: 40 } });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    // Each frame starts with an 8-byte header (stream, size): keep only the text.
    return Buffer.concat(chunks).toString('utf8').replace(/[\u0000-\u0008\u000e-\u001f]/g, '').slice(-3_000);
  }

  /** Removes every container, volume and network this run labelled, whatever state the test left them in. */
  async removeEverything(): Promise<void> {
    const filters = labelFilter(this.labels);
    const containers = await this.api.json<{ Id: string }[]>('GET', '/containers/json', { query: { all: 1, filters } });
    for (const each of containers) await this.api.json('DELETE', `/containers/${each.Id}`, { query: { force: 1, v: 1 }, accept: [404] });
    const volumes = (await this.api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
    for (const each of volumes) await this.api.json('DELETE', `/volumes/${each.Name}`, { accept: [404] });
    const networks = await this.api.json<{ Id: string }[]>('GET', '/networks', { query: { filters } });
    for (const each of networks) await this.api.json('DELETE', `/networks/${each.Id}`, { accept: [404] });
  }

  private async create(name: string, container: AppContainer, config: Record<string, unknown>,
    portBindings: Record<string, { HostIp: string; HostPort: string }[]> | undefined, aliases: string[],
    extraMounts: { volume: string; target: string }[] = []): Promise<string> {
    const created = await this.api.json<{ Id: string }>('POST', '/containers/create', {
      query: { name },
      body: {
        Image: container.image, Env: renderEnvironment(container, this.values), Labels: this.labels, ...config,
        HostConfig: {
          NetworkMode: this.network,
          // Where the machine's mail catcher (or a test's SMTP listener) is, as the driver does today.
          ExtraHosts: ['host.docker.internal:host-gateway'],
          Mounts: [...container.volumes.map((mount) => ({ Type: 'volume', Source: this.volumeName(mount.volume), Target: mount.target, ReadOnly: mount.readOnly })),
            ...extraMounts.map((mount) => ({ Type: 'volume', Source: mount.volume, Target: mount.target }))],
          ...(portBindings ? { PortBindings: portBindings } : {}),
        },
        NetworkingConfig: { EndpointsConfig: { [this.network]: { Aliases: aliases } } },
      },
    });
    return created.Id;
  }
}
