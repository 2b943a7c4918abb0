// Runs the compiled `teaminfra` command as a real child process (npm test builds it first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/package-root.js';

export const CLI = join(packageRoot, 'dist', 'src', 'cli', 'main.js');

function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" (npm test does it for you).`);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `cli`: another build's main.js (an earlier version's, for the upgrade suite); this checkout's by default. */
export function runCli(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv; cli?: string } = {}): Promise<CliResult> {
  if (!options.cli) assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.cli ?? CLI, ...args], { env: { ...process.env, ...options.env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs an admin command that must succeed and returns its JSON output. */
export async function admin(dataDir: string, args: string[], input?: string, env?: NodeJS.ProcessEnv, cli?: string): Promise<Record<string, any>> {
  const result = await runCli(['admin', ...args, '--data-dir', dataDir], { input, env, cli });
  if (result.code !== 0) throw new Error(`teaminfra admin ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** What seedThroughCli made. */
export interface CliSeeded { teamId: string; serverId: string; serviceId: string; token: string }

/**
 * As an operator would, through the command line: a team named `team`, a local server, one ERP
 * service named `service` on it, and a full-access token named `token`.
 */
export async function seedThroughCli(
  dataDir: string, names: { team: string; service: string; server?: string; token?: string }, env?: NodeJS.ProcessEnv,
): Promise<CliSeeded> {
  const run = (args: string[]) => admin(dataDir, args, undefined, env);
  const teamId = (await run(['create-team', '--name', names.team])).id as string;
  const serverId = (await run(['create-server', '--team', teamId, '--name', names.server ?? 'local'])).id as string;
  const serviceId = (await run(['create-service', '--team', teamId, '--server', serverId, '--name', names.service])).id as string;
  const token = (await run(['create-token', '--team', teamId, '--name', names.token ?? 'ops', '--full-access'])).token as string;
  return { teamId, serverId, serviceId, token };
}

export interface ServeProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `teaminfra serve` (of `cli`, this checkout's by default) on a free port and waits for its "serving on" line. */
export function startServe(dataDir: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, cli?: string): Promise<ServeProcess> {
  if (!cli) assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli ?? CLI, 'serve', '--data-dir', dataDir, '--port', '0', ...extraArgs], {
      // A free port for the mail catcher too: several servers may run at once in tests.
      env: { ...process.env, LOG_LEVEL: 'warn', TEAMINFRA_SMTP_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`serve did not start:\n${output}`)); }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /teaminfra serving on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          child, baseUrl: match[1] as string, output: () => output,
          async stop(signal = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve exited with ${code}:\n${output}`)); });
  });
}
