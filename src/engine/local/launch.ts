// Spawns one ERP service process and waits until it answers /health as itself. The process is
// detached (its own process group, output to a log file, no pipe to us), so it keeps running
// if the control plane stops or dies; see src/engine/README.md.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverError, type RunningService, type StartHooks } from '../driver.js';
import { EXIT_PORT_IN_USE, LOG_FILE, MAIL_PASSWORD_ENV, writeAppConfig, writeRuntime, type ErpAppConfig } from '../erp-app/config.js';
import { MAX_QUOTED_CHARS, quotableOutput } from '../redact-secrets.js';
import { probeHealth } from './probe.js';
import { terminate } from './process-control.js';

export interface LaunchRequest {
  entry: string;
  serviceDir: string;
  config: ErpAppConfig;
  startTimeoutMs: number;
  stopGraceMs: number;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

export async function launchService(request: LaunchRequest, hooks: StartHooks): Promise<RunningService> {
  const { serviceDir, config } = request;
  writeAppConfig(serviceDir, config);
  const log = openSync(join(serviceDir, LOG_FILE), 'a');
  const child = spawn(process.execPath, [request.entry, serviceDir], {
    cwd: serviceDir, detached: true, stdio: ['ignore', log, log],
    // The service gets none of the control plane's environment (tokens, database URL), only its
    // own outgoing-mail password, which no file holds in clear (erp-app/config.ts).
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...(config.outgoingSmtpAuth ? { [MAIL_PASSWORD_ENV]: config.outgoingSmtpAuth.password } : {}),
    },
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new DriverError(`The ERP service's process could not be created: ${error.message}.`, false, { cause: error });
  }
  // Synchronously, before anything can interrupt us: a restarted control plane finds it here.
  writeRuntime(serviceDir, { pid, port: config.port, revision: config.revision, state: 'spawned' });
  child.unref();
  let exit: Exit | undefined;
  const exited = new Promise<null>((resolve) => child.once('exit', (code, signal) => {
    exit = { code, signal };
    resolve(null);
  }));
  await hooks.spawned(pid);

  const deadline = Date.now() + request.startTimeoutMs;
  while (Date.now() < deadline) {
    if (exit) return adoptOrFail(request, exit);
    // A process that exits (port taken, bad config) is noticed at once, not after a probe's timeout.
    const report = await Promise.race([probeHealth(config.host, config.port, 500), exited]);
    if (report && report.serviceId === config.serviceId && report.pid === pid) return { pid, port: config.port, revision: report.revision };
    if (!exit) await Promise.race([sleep(15), exited]);
  }
  await terminate(pid, request.stopGraceMs);
  throw new DriverError(
    `The ERP service did not answer on its health endpoint within ${Math.round(request.startTimeoutMs / 1000)} s, so its process was stopped.`,
  );
}

async function adoptOrFail(request: LaunchRequest, exit: Exit): Promise<RunningService> {
  const { config } = request;
  if (exit.code === EXIT_PORT_IN_USE) {
    // The one legitimate holder of this service's port is another process of the same service
    // (started by a control plane that died before recording it): adopt it, never run two.
    const holder = await probeHealth(config.host, config.port, 500);
    if (holder && holder.serviceId === config.serviceId && holder.revision === config.revision) {
      return { pid: holder.pid, port: config.port, revision: holder.revision };
    }
    throw new DriverError(
      `Port ${config.host}:${config.port} is already in use by another program, so the ERP service could not listen on it. ` +
        'Its port was released: start it again to give it a new one.',
      true,
    );
  }
  const how = exit.code !== null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
  const lastLine = lastLogLine(request.serviceDir);
  throw new DriverError(`The ERP service's process ended while starting (${how})${lastLine ? `: ${lastLine}` : '.'}`);
}

/**
 * The last line of the service's log, quoted whole (quotableOutput) for the router to redact
 * before it is cut. A line that began before the window read loses its first, partial word.
 */
function lastLogLine(serviceDir: string): string | null {
  try {
    const fd = openSync(join(serviceDir, LOG_FILE), 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, MAX_QUOTED_CHARS);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      const lines = buffer.toString('utf8').split('\n');
      let last = lines.length - 1;
      while (last >= 0 && (lines[last] as string).trim() === '') last--;
      if (last < 0) return null;
      return quotableOutput((lines[last] as string).trim(), last === 0 && length < size);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
