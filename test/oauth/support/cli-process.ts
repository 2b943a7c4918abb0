// The compiled `teaminfra` command as a long-running child process (login waits for a person),
// with a way to wait for a line of its output.
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from '../../support/cli.js';

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stderr+stdout, waiting for it to appear. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited(): Promise<number | null>;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const notify = () => { for (const listener of listeners) listener(); };
  child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk; notify(); });
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk; notify(); });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => { notify(); resolve(code); }));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited: () => exit,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stderr + stdout);
          if (match) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(match);
          } else if (child.exitCode !== null) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`teaminfra ${args.join(' ')} exited (${child.exitCode}) before printing ${pattern}:\n${stderr}${stdout}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`teaminfra ${args.join(' ')} did not print ${pattern} in ${timeoutMs} ms:\n${stderr}${stdout}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}
