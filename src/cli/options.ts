// Argument parsing for the command line, on node:util parseArgs, with errors that say what to do.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { plainTextProblem } from '../core/plain-text.js';
import { DEFAULT_POOL_SIZE, isPostgresUrl, type PostgresTarget } from '../db/dialect-postgres.js';
import { DEFAULT_RETENTION, type RetentionPolicy } from '../engine/backup-retention.js';
import { backupCacheBytesFromEnv } from '../engine/docker/backup-cache.js';
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

/** A required option's value, trimmed; refused when it holds characters no name may (src/core/plain-text.ts). */
export function required(values: Record<string, unknown>, name: string, command: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${command}: --${name} is required.`);
  const problem = plainTextProblem(value.trim());
  if (problem) throw new UsageError(`${command}: --${name} ${problem}`);
  return value.trim();
}

/**
 * A secret an operator's command reads from a file, never from the command line (where `ps` and
 * shell histories show it): the file's one line, without its line end; `holds` says what the
 * line is, for the sentence when the file is empty.
 */
export function secretFromFile(file: string, command: string, holds: string): string {
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new UsageError(`${command}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  if (secret === '') throw new UsageError(`${command}: ${file} is empty; it holds ${holds} on one line.`);
  return secret;
}

export function listOption(value: unknown): string[] | null {
  if (typeof value !== 'string') return null;
  return value.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

/** Where a command's data is: this node's files, and the database (SQLite there, or PostgreSQL). */
export interface DataLocation {
  dataDir: string;
  database?: PostgresTarget;
}

/** --data-dir (default ./data); --database-url or DATABASE_URL for PostgreSQL, with TEAMINFRA_DB_POOL connections. */
export function dataLocationOf(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): DataLocation {
  const dataDir = (values['data-dir'] as string | undefined) ?? './data';
  const url = (values['database-url'] as string | undefined) ?? env.DATABASE_URL;
  if (url === undefined || url === '') return { dataDir };
  if (!isPostgresUrl(url)) {
    throw new UsageError('--database-url (or DATABASE_URL) must be a PostgreSQL address such as ' +
      'postgres://user:password@host:5432/database; leave it out to keep the data in SQLite under --data-dir.');
  }
  const pool = env.TEAMINFRA_DB_POOL;
  const poolSize = pool === undefined || pool === '' ? DEFAULT_POOL_SIZE : Number(pool);
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000) {
    throw new UsageError(`TEAMINFRA_DB_POOL must be a number of connections from 1 to 1000; got "${pool}".`);
  }
  return { dataDir, database: { url, poolSize } };
}

/**
 * TEAMINFRA_LEASE_MS: how long an operation's lease lasts without renewal, so how long before
 * another node takes a silent node for gone (default 30 s, src/engine/engine.ts).
 */
export function leaseMsFromEnv(env: NodeJS.ProcessEnv = process.env): { leaseMs?: number } {
  const text = env.TEAMINFRA_LEASE_MS;
  if (text === undefined || text === '') return {};
  const leaseMs = Number(text);
  if (!Number.isInteger(leaseMs) || leaseMs < 300) throw new UsageError(`TEAMINFRA_LEASE_MS must be a number of milliseconds of at least 300; got "${text}".`);
  return { leaseMs };
}

/**
 * TEAMINFRA_NODE_GONE_MS: how long a node may go unseen before another node fails the
 * operations queued for it, with a reason naming it (default 10 minutes, src/engine/node-heartbeat.ts).
 */
export function nodeGoneMsFromEnv(env: NodeJS.ProcessEnv = process.env): { nodeGoneAfterMs?: number } {
  const text = env.TEAMINFRA_NODE_GONE_MS;
  if (text === undefined || text === '') return {};
  const nodeGoneAfterMs = Number(text);
  if (!Number.isInteger(nodeGoneAfterMs) || nodeGoneAfterMs < 1000) {
    throw new UsageError(`TEAMINFRA_NODE_GONE_MS must be a number of milliseconds of at least 1000; got "${text}".`);
  }
  return { nodeGoneAfterMs };
}

/** TEAMINFRA_BACKUP_CACHE_MB: the most this node keeps of copies of backups kept on Docker engines (src/engine/docker/backup-cache.ts). */
export function backupCacheFromEnv(env: NodeJS.ProcessEnv = process.env): { backupCacheBytes: number } {
  try {
    return { backupCacheBytes: backupCacheBytesFromEnv(env) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * TEAMINFRA_KEEP_SAFETY_BACKUPS (default 3) and TEAMINFRA_KEEP_MANUAL_BACKUPS (default: all):
 * the newest backups of each kind kept per service; a team may have its own numbers
 * (admin set-backup-retention). src/engine/backup-retention.ts says what else is kept.
 */
export function backupRetentionFromEnv(env: NodeJS.ProcessEnv = process.env): { backupRetention?: RetentionPolicy } {
  const safety = env.TEAMINFRA_KEEP_SAFETY_BACKUPS;
  const manual = env.TEAMINFRA_KEEP_MANUAL_BACKUPS;
  if ((safety === undefined || safety === '') && (manual === undefined || manual === '')) return {};
  return {
    backupRetention: {
      keepSafety: safety === undefined || safety === '' ? DEFAULT_RETENTION.keepSafety : backupCount('TEAMINFRA_KEEP_SAFETY_BACKUPS', safety, 0),
      keepManual: manual === undefined || manual === '' || manual === 'all' ? null : backupCount('TEAMINFRA_KEEP_MANUAL_BACKUPS', manual, 1),
    },
  };
}

/** A number of backups to keep, from an option or variable; `name` says where it came from. */
export function backupCount(name: string, text: string, least: number): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < least || count > 10_000) {
    throw new UsageError(`${name} must be a number of backups from ${least} to 10000; got "${text}".`);
  }
  return count;
}
