// The rollback window of a move (TEAMINFRA_MOVE_ROLLBACK_HOURS): 24 hours for a newcomer, any
// positive number of hours up to a year (a fraction too), and a sentence for anything else;
// `serve` refuses a bad value at start rather than at a move's switch.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { moveRollbackMsFromEnv } from '../../../src/engine/moves/rollback-window.js';
import { runCli } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';

describe('moveRollbackMsFromEnv', () => {
  it('gives 24 hours when the setting is absent or blank', () => {
    expect(moveRollbackMsFromEnv({})).toBe(24 * 3_600_000);
    expect(moveRollbackMsFromEnv({ TEAMINFRA_MOVE_ROLLBACK_HOURS: ' ' })).toBe(24 * 3_600_000);
  });

  it('takes whole and fractional hours', () => {
    expect(moveRollbackMsFromEnv({ TEAMINFRA_MOVE_ROLLBACK_HOURS: '72' })).toBe(72 * 3_600_000);
    expect(moveRollbackMsFromEnv({ TEAMINFRA_MOVE_ROLLBACK_HOURS: '0.001' })).toBe(3_600);
  });

  it('refuses with a sentence a value that is no positive number of hours up to a year', () => {
    for (const value of ['0', '-1', 'a day', '9000']) {
      expect(() => moveRollbackMsFromEnv({ TEAMINFRA_MOVE_ROLLBACK_HOURS: value }))
        .toThrow(`TEAMINFRA_MOVE_ROLLBACK_HOURS must be a number of hours above 0 and up to 8760 (default 24); it is "${value}".`);
    }
  });

  it('stops serve at start when the setting is bad', async () => {
    const dataDir = tempDataDir();
    try {
      const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { env: { TEAMINFRA_MOVE_ROLLBACK_HOURS: 'a day', TEAMINFRA_SMTP_PORT: '0' } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('TEAMINFRA_MOVE_ROLLBACK_HOURS must be a number of hours above 0 and up to 8760 (default 24); it is "a day".');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
