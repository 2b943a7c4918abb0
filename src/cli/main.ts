#!/usr/bin/env node
// `teaminfra`: serve the platform, or act on its database as the operator.
import { runAdmin } from './admin.js';
import { runMcpStdio } from './mcp.js';
import { runServe } from './serve.js';
import { USAGE, UsageError } from './usage.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return runServe(rest);
    case 'mcp':
      return runMcpStdio(rest);
    case 'admin':
      process.stdout.write(JSON.stringify(await runAdmin(rest, readStdin)) + '\n');
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
