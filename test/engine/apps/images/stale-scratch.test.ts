// A killed build's scratch root and half-written tarball are removed by the next build; a live
// build's (this process's) are left alone.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeStaleScratch } from '../../../../src/engine/apps/images/stale-scratch.js';

describe('removeStaleScratch', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('removes what a process that no longer runs left, and keeps what a running one holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teaminfra-scratch-'));
    made.push(dir);
    const gone = spawnSync('true').pid!;
    const live = process.pid;
    mkdirSync(join(dir, `image-${gone}-abc`, 'root', 'etc'), { recursive: true });
    writeFileSync(join(dir, `tryton.tar.${gone}.partial`), 'half');
    mkdirSync(join(dir, `image-${live}-def`));
    writeFileSync(join(dir, `tryton.tar.${live}.partial`), 'being written');
    writeFileSync(join(dir, 'tryton.tar'), 'finished');
    await removeStaleScratch([dir]);
    expect(existsSync(join(dir, `image-${gone}-abc`))).toBe(false);
    expect(existsSync(join(dir, `tryton.tar.${gone}.partial`))).toBe(false);
    expect(existsSync(join(dir, `image-${live}-def`))).toBe(true);
    expect(existsSync(join(dir, `tryton.tar.${live}.partial`))).toBe(true);
    expect(existsSync(join(dir, 'tryton.tar'))).toBe(true);
  });
});
