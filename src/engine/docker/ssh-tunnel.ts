// ssh://user@host engines, reached the way the Docker CLI's own ssh transport reaches them:
// through the system's `ssh` (its keys, agent, known_hosts and config), here as a forward of
// a local unix socket to the engine's socket on that host. BatchMode: never a password prompt
// that would hang the control plane; a host that refuses us fails within the connect timeout.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineAddress } from './engine-address.js';

export interface SshTunnel {
  socketPath: string;
  close(): void;
}

export async function openSshTunnel(address: Extract<EngineAddress, { kind: 'ssh' }>, timeoutMs = 10_000): Promise<SshTunnel> {
  const dir = mkdtempSync(join(tmpdir(), 'teaminfra-ssh-'));
  const socketPath = join(dir, 'docker.sock');
  const destination = address.user ? `${address.user}@${address.host}` : address.host;
  const args = [
    '-nNT', '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes', '-o', `ConnectTimeout=${Math.ceil(timeoutMs / 1000)}`,
    '-o', 'StreamLocalBindUnlink=yes', '-L', `${socketPath}:${address.socketPath}`,
    ...(address.port ? ['-p', String(address.port)] : []), '--', destination,
  ];
  const child: ChildProcess = spawn('ssh', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-500);
  });
  let exited: string | undefined;
  child.on('error', (error) => {
    exited = `ssh could not be started (${error.message})`;
  });
  child.on('exit', (code) => {
    exited ??= `ssh ended (exit code ${code})${stderr.trim() ? `: ${stderr.trim().split('\n').pop()}` : ''}`;
  });
  const close = () => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(socketPath)) {
    if (exited !== undefined || Date.now() > deadline) {
      close();
      throw new Error(exited ?? `ssh did not open the forward within ${timeoutMs} ms`);
    }
    await sleep(50);
  }
  child.unref();
  return { socketPath, close };
}
