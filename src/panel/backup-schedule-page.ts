// A service's backup schedule in the panel (owners and admins): when it is backed up by itself,
// how many scheduled backups are kept, and the scheduled backups that failed lately. The form
// takes the same fields, checked by the same rules, as PUT /api/service-erp/{id}/backup-schedule.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { App } from '../app.js';
import { listFailedScheduledBackups } from '../db/repositories/backup-schedules.js';
import { readSchedule, writeSchedule, type ScheduleView } from '../engine/backup-schedule/service-schedule.js';
import { BackupScheduleFields } from '../../tools/schemas.js';
import { html, type Html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { PanelRefusal, requireCsrf, requireRole, requireTeamSession, type TeamSession } from './session-guard.js';

export const backupSchedulePath = (serviceId: string) => `/panel/services/${serviceId}/backup-schedule`;

const SCHEDULE = BackupScheduleFields();
const FORM = z.strictObject({
  ...SCHEDULE,
  keep_daily: z.coerce.number().pipe(SCHEDULE.keep_daily),
  keep_weekly: z.coerce.number().pipe(SCHEDULE.keep_weekly),
  keep_monthly: z.coerce.number().pipe(SCHEDULE.keep_monthly),
});
const FAILURES_SHOWN = 5;

type Body = Record<string, string | string[] | undefined>;

export function registerBackupSchedulePage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function manager(request: FastifyRequest, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (session) requireRole(session, ['owner', 'admin'], 'a backup schedule');
    return session;
  }
  async function ownService(session: TeamSession, id: string) {
    const service = await db.selectFrom('erp_services').select(['id', 'name', 'parent_id']).where('id', '=', id)
      .where('team_id', '=', session.team.id).where('deleted_at', 'is', null).executeTakeFirst();
    if (!service) throw new PanelRefusal(404, 'No such ERP service', 'This ERP service does not exist in your team.');
    return service;
  }

  /** `shown`: the schedule as saved, or the fields as sent back with what was wrong (note). */
  async function view(session: TeamSession, service: { id: string; name: string }, shown: ScheduleView | Body, note?: Html): Promise<Html> {
    const failures = await listFailedScheduledBackups(db, service.id, FAILURES_SHOWN);
    const next = typeof shown.next_run_at === 'string' ? shown.next_run_at : null;
    const option = (value: string, label: string) => html`<option value="${value}"${shown.frequency === value ? html` selected` : ''}>${label}</option>`;
    const field = (name: 'keep_daily' | 'keep_weekly' | 'keep_monthly', label: string, least: number) =>
      html`<label>${label} <input type="number" name="${name}" min="${least}" max="1000" required value="${String(shown[name] ?? '')}"></label>`;
    return page(`Backup schedule of ${service.name}`, html`
${note ?? ''}
${failures.length > 0 ? html`<div class="error" role="alert"><p>Scheduled backups that failed lately:</p><ul>
  ${failures.map((failure) => html`<li>${failure.created_at.slice(0, 16).replace('T', ' ')} UTC (<code>${failure.id}</code>): ${failure.reason ?? 'no reason recorded'}</li>`)}
</ul></div>` : ''}
<p>${next ? `Next scheduled backup: ${next.slice(0, 16).replace('T', ' ')} UTC.` : 'No scheduled backup: the schedule is off.'}
Times of day are in the team's time zone, ${session.team.timezone}.</p>
<form method="post" action="${backupSchedulePath(service.id)}">${csrfField(session)}
  <label>Frequency <select name="frequency">${option('daily', 'Daily')}${option('hourly', 'Hourly')}${option('off', 'Off')}</select></label>
  <label>Time (HH:MM; hourly: the minutes past each hour) <input name="time" required pattern="([01][0-9]|2[0-3]):[0-5][0-9]" value="${String(shown.time ?? '')}"></label>
  <fieldset><legend>Scheduled backups kept (manual and safety backups are never pruned by this)</legend>
  ${field('keep_daily', 'The newest of each of the last N days', 1)}
  ${field('keep_weekly', 'The newest of each of the last N weeks', 0)}
  ${field('keep_monthly', 'The newest of each of the last N months', 0)}
  </fieldset>
  <button type="submit">Save schedule</button> <a href="/panel">Back to the Overview</a>
</form>`, session);
  }

  server.get<{ Params: { id: string } }>('/panel/services/:id/backup-schedule', async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    const service = await ownService(session, request.params.id);
    return sendPage(reply, await view(session, service, await readSchedule(db, service.id, Date.now())));
  });

  server.post<{ Params: { id: string }; Body: Body }>('/panel/services/:id/backup-schedule', async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const service = await ownService(session, request.params.id);
    const { _csrf: _csrf, next_run_at: _shownOnly, ...fields } = request.body ?? {};
    const parsed = FORM.safeParse(fields);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'form'}: ${issue.message}`);
      return sendPage(reply, await view(session, service, fields, html`<p class="error" role="alert">The schedule was not saved. ${problems.join(' ')}</p>`), 422);
    }
    const saved = await writeSchedule(db, service.id, parsed.data, Date.now(), { by: { type: 'user', id: session.userId } });
    panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'set_backup_schedule', outcome: 'allowed', detail: service.id });
    return sendPage(reply, await view(session, service, saved, html`<p class="notice" role="status">Schedule saved.</p>`));
  });
}
