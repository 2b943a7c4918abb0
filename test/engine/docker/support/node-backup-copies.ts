// This node's copies of backups kept on a Docker engine (src/engine/docker/backup-cache.ts), as
// a test sees them on disk: where one is, how many bytes they take, and waiting for one to go.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

export function nodeCopyOf(dataDir: string, serviceId: string, backupId: string): string {
  return join(dataDir, 'backups', serviceId, `${backupId}.tar.zst`);
}

/** The bytes of every node copy under `dataDir` (the local driver's .sqlite backups are not copies). */
export function nodeCopiesBytes(dataDir: string): number {
  const root = join(dataDir, 'backups');
  if (!existsSync(root)) return 0;
  let total = 0;
  for (const folder of readdirSync(root)) {
    for (const file of readdirSync(join(root, folder)).filter((name) => /\.tar\.(zst|gz)$/.test(name))) {
      try {
        total += statSync(join(root, folder, file)).size;
      } catch {
        // Let go meanwhile.
      }
    }
  }
  return total;
}

/** A node's copy is let go once the answer that sent it has closed, just after the client has its bytes. */
export async function expectGone(file: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(existsSync(file)).toBe(false);
}
