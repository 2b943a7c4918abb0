// `teaminfra admin set-server-limits --server ID [--memory-mb N|default] [--cpus N|default]`: how
// much memory and CPU each ERP container of a Docker server may use. Applies to the containers
// its services get from then on (the next start, redeploy or restore); `default` returns to the
// operator's default (TEAMINFRA_CONTAINER_MEMORY_MB, TEAMINFRA_CONTAINER_CPUS).
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { containerLimitsOf, CPUS_RANGE, MEMORY_MB_RANGE } from '../engine/docker/container-limits.js';
import { parseOptions, required } from './options.js';
import { UsageError } from './usage.js';

const COMMAND = 'set-server-limits';

export async function setServerLimits(db: Kysely<Database>, args: string[]): Promise<object> {
  const values = parseOptions(args, { server: { type: 'string' }, 'memory-mb': { type: 'string' }, cpus: { type: 'string' } }, COMMAND);
  const serverId = required(values, 'server', COMMAND);
  if (values['memory-mb'] === undefined && values.cpus === undefined) {
    throw new UsageError(`${COMMAND}: give --memory-mb, --cpus or both (a number, or "default").`);
  }
  const row = await db.selectFrom('docker_servers').select(['memory_mb', 'cpu_millicores']).where('server_id', '=', serverId).executeTakeFirst();
  if (!row) throw new UsageError(`${COMMAND}: server ${serverId} is not a Docker server.`);
  const memoryMb = values['memory-mb'] === undefined ? row.memory_mb : settingOf(values['memory-mb'], '--memory-mb', MEMORY_MB_RANGE, true);
  const cpus = values.cpus === undefined ? (row.cpu_millicores === null ? null : row.cpu_millicores / 1000) : settingOf(values.cpus, '--cpus', CPUS_RANGE, false);
  const cpuMillicores = cpus === null ? null : Math.round(cpus * 1000);
  await db.updateTable('docker_servers').set({ memory_mb: memoryMb, cpu_millicores: cpuMillicores }).where('server_id', '=', serverId).execute();
  const effective = containerLimitsOf({ memoryMb, cpuMillicores });
  return { id: serverId, memory_mb: effective.memoryBytes / 1024 / 1024, cpus: effective.nanoCpus / 1e9, default: { memory_mb: memoryMb === null, cpus: cpuMillicores === null } };
}

function settingOf(text: string, option: string, range: { min: number; max: number }, whole: boolean): number | null {
  if (text === 'default') return null;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < range.min || value > range.max || (whole && !Number.isInteger(value))) {
    throw new UsageError(`${COMMAND}: ${option} must be ${whole ? 'a whole number' : 'a number'} from ${range.min} to ${range.max}, or "default"; got "${text}".`);
  }
  return value;
}
