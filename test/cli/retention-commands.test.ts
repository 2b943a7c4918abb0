// The operator's retention commands: how long rows are kept (kept in the database, "default"
// clears one, a bad number is a sentence), and a team's default backup schedule, which a new
// service of the team then shows.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { readSchedule } from '../../src/engine/backup-schedule/service-schedule.js';
import { admin, runCli } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';

describe('teaminfra admin retention commands', () => {
  let dataDir: string;
  let teamId: string;
  beforeAll(async () => {
    dataDir = tempDataDir();
    teamId = (await admin(dataDir, ['create-team', '--name', 'Acme', '--timezone', 'Europe/Brussels'])).id;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const failing = async (args: string[]) => {
    const result = await runCli(['admin', ...args, '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    return result.stderr;
  };

  it('set-row-retention keeps the operator\'s days, prints the days in force, and "default" takes the default again', async () => {
    expect(await admin(dataDir, ['set-row-retention', '--audit-days', '30', '--operation-days', '10']))
      .toEqual({ audit_days: 30, webhooks_days: 30, operations_days: 10 });
    expect(await admin(dataDir, ['set-row-retention', '--audit-days', 'default']))
      .toEqual({ audit_days: 400, webhooks_days: 30, operations_days: 10 });
    expect(await failing(['set-row-retention', '--webhook-days', '0'])).toContain('--webhook-days must be a whole number of days from 1 to 36500');
    expect(await failing(['set-row-retention'])).toContain('give --audit-days N');
  });

  it("set-backup-schedule-default gives the team's new services that schedule, in the team's time zone", async () => {
    expect(await admin(dataDir, ['set-backup-schedule-default', '--team', teamId, '--time', '22:30', '--keep-daily', '3', '--keep-monthly', '12']))
      .toEqual({ team_id: teamId, frequency: 'daily', time: '22:30', keep_daily: 3, keep_weekly: 4, keep_monthly: 12 });
    const serverId = (await admin(dataDir, ['create-server', '--team', teamId, '--name', 'eu-1'])).id;
    const serviceId = (await admin(dataDir, ['create-service', '--team', teamId, '--server', serverId, '--name', 'Shop'])).id;
    const db = openDatabase(dataDir);
    const schedule = await readSchedule(db.kysely, serviceId, Date.parse('2025-07-01T12:00:00Z'));
    await db.close();
    // 22:30 in Brussels in summer is 20:30 UTC.
    expect(schedule).toEqual({
      service_id: serviceId, frequency: 'daily', time: '22:30', keep_daily: 3, keep_weekly: 4, keep_monthly: 12, next_run_at: '2025-07-01T20:30:00.000Z',
    });
    expect(await failing(['set-backup-schedule-default', '--team', teamId, '--time', '25:00'])).toContain('--time must be HH:MM');
    expect(await failing(['set-backup-schedule-default', '--team', teamId, '--frequency', 'weekly'])).toContain('--frequency must be off, hourly or daily');
  });
});
