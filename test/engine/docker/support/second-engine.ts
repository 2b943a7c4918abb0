// A second Docker engine on this machine, standing in for a second machine: its own `dockerd`
// with its own socket, data root, exec root (and so its own containerd) and pid file, on a
// bridge of its own (a fresh interface and /24) so that it never touches the first engine's
// docker0. It leaves the firewall alone (--iptables=false): published ports are served by
// docker-proxy on 127.0.0.1, which reaches the containers over the bridge, and containers reach
// this machine (the mail catcher) at the bridge's own address. Needs root, as dockerd does.
//
// Its user-defined networks (a service's own network, its front's) come from an address pool of
// its own (10.N.0.0/16), never one the first engine uses. Containers on one such network talk to
// each other (Tryton to its database, a front to its revision); with the first engine's firewall
// (FORWARD policy DROP, and bridged traffic passing through it) that takes one rule, which only
// lets the pool's addresses reach each other, added at start and removed at stop.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../../../../src/engine/docker/engine-address.js';

export interface SecondEngine {
  /** unix:///tmp/.../docker.sock */
  host: string;
  api: DockerApi;
  stop(): Promise<void>;
  /** Stops the daemon, keeping its files and bridge: its engine stops answering (an engine that went down). */
  stopDaemon(): Promise<void>;
  /** Starts the daemon again on the same socket, after stopDaemon(); resolves once it answers. */
  startDaemon(): Promise<void>;
  /**
   * With `diskBytes`: the data root's disk made to have `bytes` free from now on (its tmpfs
   * resized to what it holds plus that), as a server whose disk is nearly full. Returns the
   * bytes it holds.
   */
  leaveFreeOnDisk(bytes: number): number;
}

export interface SecondEngineOptions {
  /** The data root on a disk of its own of this size (a tmpfs: memory), to fill it on purpose (leaveFreeOnDisk). */
  diskBytes?: number;
}

function onPath(command: string): boolean {
  try {
    execFileSync('which', [command], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Root, and dockerd and ip installed: what starting a second engine takes. */
export const secondEngineStartable = process.platform === 'linux' && process.getuid?.() === 0 && onPath('dockerd') && onPath('ip');

export async function startSecondEngine(options: SecondEngineOptions = {}): Promise<SecondEngine> {
  const root = mkdtempSync(join(tmpdir(), 'teaminfra-dockerd-'));
  const dataRoot = join(root, 'data');
  if (options.diskBytes) {
    mkdirSync(dataRoot);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${options.diskBytes},mode=0711`, 'teaminfra-test-disk', dataRoot]);
  }
  const bridge = `tinf${randomBytes(3).toString('hex')}`;
  // 172.30.N.0/24, N from the bridge's name: two suites at once do not pick the same one.
  const subnet = `172.30.${16 + (parseInt(bridge.slice(4), 16) % 200)}`;
  execFileSync('ip', ['link', 'add', 'name', bridge, 'type', 'bridge']);
  execFileSync('ip', ['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
  execFileSync('ip', ['link', 'set', bridge, 'up']);
  const pool = `10.${100 + (parseInt(bridge.slice(4), 16) % 100)}.0.0/16`;
  const poolRule = ['FORWARD', '-s', pool, '-d', pool, '-j', 'ACCEPT'];
  const firewalled = onPath('iptables');
  if (firewalled) execFileSync('iptables', ['-I', ...poolRule]);
  const socket = join(root, 'docker.sock');
  const log = openSync(join(root, 'dockerd.log'), 'a');
  // A dockerd started again with address pools and its default network from before deletes the
  // interface named docker0, whatever its --bridge (moby's initBridgeDriver, "clear stale bridge
  // network"): the first engine's bridge, and every container of that engine loses its network.
  // It skips that with --live-restore, so a daemon started again has it; stop() then removes
  // the containers itself, which live-restore would leave running.
  let restarted = false;
  const spawnDaemon = (): { daemon: ChildProcess; exited: Promise<void> } => {
    const child = spawn('dockerd', [
      '--host', `unix://${socket}`, '--data-root', dataRoot, '--exec-root', join(root, 'exec'), '--pidfile', join(root, 'docker.pid'),
      '--bridge', bridge, '--iptables=false', '--ip-forward=false', '--ip-masq=false', '--default-address-pool', `base=${pool},size=24`,
      ...(restarted ? ['--live-restore'] : []),
    ], { stdio: ['ignore', log, log] });
    return { daemon: child, exited: new Promise<void>((resolve) => child.once('exit', () => resolve())) };
  };
  let { daemon, exited } = spawnDaemon();
  const host = `unix://${socket}`;
  const api = new DockerApi(parseEngineAddress(host));
  const stopDaemon = async () => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGTERM');
    await Promise.race([exited, sleep(30_000)]);
  };
  const stop = async () => {
    if (restarted) await removeAllContainers(api).catch(() => undefined);
    await api.close();
    await stopDaemon();
    execFileSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
    if (options.diskBytes) {
      try { execFileSync('umount', ['--lazy', dataRoot], { stdio: 'ignore' }); } catch { /* not mounted */ }
    }
    if (firewalled) {
      try { execFileSync('iptables', ['-D', ...poolRule], { stdio: 'ignore' }); } catch { /* already gone */ }
    }
    rmSync(root, { recursive: true, force: true });
  };
  const answering = async () => {
    for (let waited = 0; ; waited += 200) {
      if (existsSync(socket) && await api.ping(2_000).then(() => true, () => false)) return;
      if (daemon.exitCode !== null || waited > 60_000) {
        const output = readFileSync(join(root, 'dockerd.log'), 'utf8').split('\n').slice(-5).join('\n');
        await stop();
        throw new Error(`The second dockerd did not start:\n${output}`);
      }
      await sleep(200);
    }
  };
  await answering();
  const startDaemon = async () => {
    restarted = true;
    ({ daemon, exited } = spawnDaemon());
    await answering();
  };
  const leaveFreeOnDisk = (bytes: number) => {
    if (!options.diskBytes) throw new Error('leaveFreeOnDisk needs a second engine started with diskBytes');
    const disk = statfsSync(dataRoot);
    const used = (disk.blocks - disk.bfree) * disk.bsize;
    execFileSync('mount', ['-o', `remount,size=${used + bytes}`, dataRoot]);
    return used;
  };
  return { host, api, stop, stopDaemon, startDaemon, leaveFreeOnDisk };
}

async function removeAllContainers(api: DockerApi): Promise<void> {
  const containers = await api.json<{ Id: string }[]>('GET', '/containers/json', { query: { all: 1 } });
  for (const { Id } of containers) await api.json('DELETE', `/containers/${Id}`, { query: { force: 1, v: 1 }, accept: [404] });
}
