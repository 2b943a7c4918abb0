// Argument parsing for the command line, on node:util parseArgs, with errors that say what to do.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage.js';

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export const COMMON_OPTIONS = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies OptionSpec;

export function parseOptions<T extends OptionSpec>(args: string[], options: T, command: string) {
  try {
    return parseArgs({ args, options: { ...COMMON_OPTIONS, ...options }, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message.replace(/\. To specify.*$/s, '.')} Run "teaminfra help" for usage.`);
  }
}

export function required(values: Record<string, unknown>, name: string, command: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${command}: --${name} is required.`);
  return value.trim();
}

export function listOption(value: unknown): string[] | null {
  if (typeof value !== 'string') return null;
  return value.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

export function dataDirOf(values: Record<string, unknown>): string {
  const databaseUrl = (values['database-url'] as string | undefined) ?? process.env.DATABASE_URL;
  if (databaseUrl) {
    throw new UsageError('PostgreSQL (--database-url / DATABASE_URL) is not supported by this version yet; use --data-dir for SQLite.');
  }
  return (values['data-dir'] as string | undefined) ?? './data';
}
