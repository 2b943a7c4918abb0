#!/usr/bin/env node
// `teaminfra`: serve the platform, or act on its database as the operator.
// Each command loads only its own modules: `teaminfra mcp` is started by assistants and its
// start-up time is felt; the HTTP server and panel are not needed for it.
import module from 'node:module';
import { USAGE, UsageError } from './usage.js';

/**
 * Node 22.1 and later can keep the compiled code of every module on disk, which spares most of
 * the compile time of the next start (an assistant starts `teaminfra mcp` often). Node 20 has no
 * such cache; there this does nothing. A cache that cannot be written only costs that saving.
 */
function enableCompileCache(): void {
  const enable = (module as { enableCompileCache?: () => unknown }).enableCompileCache;
  try {
    enable?.();
  } catch {
    // Not worth failing a command for.
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: string[]): Promise<void> {
  // Everything this process and its children create (the database, the services' files, backups,
  // caught emails) is readable by the running user only, whatever the shell's umask.
  process.umask(0o077);
  enableCompileCache();
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return (await import('./serve.js')).runServe(rest);
    case 'mcp':
      return (await (await import('./mcp-module.js')).loadMcpCommand()).runMcpStdio(rest);
    case 'login':
      return (await import('./login.js')).runLogin(rest);
    case 'logout':
      return (await import('./login.js')).runLogout(rest);
    case 'services':
      return (await import('./services-command.js')).runServices(rest);
    case 'admin':
      process.stdout.write(JSON.stringify(await (await import('./admin.js')).runAdmin(rest, readStdin)) + '\n');
      return;
    case 'help':
    case '--help':
    case '-h':
    case undefined:
      process.stdout.write(USAGE + '\n');
      return;
    default:
      throw new UsageError(`Unknown command "${command}". Run "teaminfra help" for usage.`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`teaminfra: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`teaminfra: ${(error as Error).message}\n`);
  process.exit(1);
});
