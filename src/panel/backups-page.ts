// A service's backups in the panel: kind, state, size, when and where each is kept, with
// Download (the same single-use link download_backup gives over MCP: the panel redirects the
// browser to it) and Restore (a safety backup of the data it replaces is taken first), for the
// roles that hold backups:download and backups:restore. Everything goes through invoke() as
// the member, so downloads and restores are in the activity trail with the member as actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { invoke } from '../core/invoke.js';
import { isEngineBackupPath } from '../engine/docker/engine-backup-path.js';
import downloadBackup from '../../tools/backups/download-backup.js';
import listBackups from '../../tools/backups/list-backups.js';
import restoreBackup from '../../tools/backups/restore-backup.js';
import type { BackupView, Infer } from '../../tools/schemas.js';
import { backupSchedulePath } from './backup-schedule-page.js';
import { html, type Html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { memberCredentials, roleAllows, roleHolds } from './member-principal.js';
import { operationPath } from './operation-page.js';
import { PanelRefusal, requireCsrf, requireTeamSession, type TeamSession } from './session-guard.js';

export const backupsPath = (serviceId: string) => `/panel/services/${serviceId}/backups`;
const BACKUPS_SHOWN = 50;
const SERVICE_ID = /^svc_[0-9a-z]{20}$/;
const BACKUP_ID = /^bak_[0-9a-z]{20}$/;
const RESTORE_SENTENCE = 'Restore replaces the data of the service with this backup. A safety backup of the data it replaces is taken first, so a restore can be undone.';

export function registerBackupsPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  server.get<{ Params: { id: string }; Querystring: { after?: string } }>('/panel/services/:id/backups', async (request, reply) => {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return reply;
    const service = SERVICE_ID.test(request.params.id) ? await db.selectFrom('erp_services as s').innerJoin('servers as v', 'v.id', 's.server_id')
      .select(['s.id', 's.name', 'v.name as server_name']).where('s.id', '=', request.params.id).where('s.team_id', '=', session.team.id)
      .where('s.deleted_at', 'is', null).executeTakeFirst() : undefined;
    if (!service) throw new PanelRefusal(404, 'No such ERP service', 'This ERP service does not exist in your team, or it was deleted.');
    const after = typeof request.query.after === 'string' && request.query.after.length <= 200 ? request.query.after : undefined;
    const backups = await invoke(listBackups, { service_id: service.id, limit: BACKUPS_SHOWN, ...(after ? { cursor: after } : {}) }, memberCredentials(session), app);
    const ids = backups.data.map((backup) => backup.id);
    const files = new Map(ids.length === 0 ? [] : (await db.selectFrom('backups').select(['id', 'file_path']).where('id', 'in', ids).execute())
      .map((row) => [row.id, row.file_path]));
    const where = (id: string) => {
      const file = files.get(id);
      if (!file) return '—';
      return isEngineBackupPath(file) ? `on the Docker engine of server ${service.server_name}` : `on the disk of the control plane, for server ${service.server_name}`;
    };
    return sendPage(reply, page(`Backups of ${service.name}`, html`
<p><a href="/panel/services/${service.id}">← ${service.name}</a>${roleHolds(session, 'backups:delete') ? html` · <a href="${backupSchedulePath(service.id)}">Backup schedule</a>` : ''}</p>
${roleAllows(session, restoreBackup) ? html`<p class="muted" id="restore-sentence">${RESTORE_SENTENCE}</p>` : ''}
${backups.data.length === 0 ? html`<p class="muted">${after ? 'No more backups.' : 'No backups yet. “Back up now” on the service page takes one.'}</p>` : html`<table>
  <thead><tr><th>Taken</th><th>Kind</th><th>State</th><th>Size</th><th>Where</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${backups.data.map((backup) => html`<tr data-backup-id="${backup.id}"><td>${backup.created_at.slice(0, 19).replace('T', ' ')} UTC<div class="muted">${backup.id}</div></td>
    <td>${backup.kind}</td><td class="state">${backup.state}${backup.reason ? html`<div class="muted">${backup.reason}</div>` : ''}</td>
    <td>${size(backup.size_bytes)}</td><td>${where(backup.id)}</td><td>${backup.state === 'completed' ? backupForms(session, backup) : ''}</td></tr>`)}</tbody>
</table>`}
${backups.next_cursor ? html`<p><a href="${backupsPath(service.id)}?after=${encodeURIComponent(backups.next_cursor)}">Next backups</a></p>` : ''}`, session));
  });

  async function formOf(request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (!session) return undefined;
    requireCsrf(session, request);
    if (!BACKUP_ID.test(request.params.id)) throw new PanelRefusal(404, 'No such backup', 'This backup does not exist in your team.');
    return session;
  }

  server.post<{ Params: { id: string } }>('/panel/backups/:id/download', async (request, reply) => {
    const session = await formOf(request, reply);
    if (!session) return reply;
    const link = await invoke(downloadBackup, { backup_id: request.params.id }, memberCredentials(session), app);
    return reply.redirect(link.download_url, 303);
  });

  server.post<{ Params: { id: string } }>('/panel/backups/:id/restore', async (request, reply) => {
    const session = await formOf(request, reply);
    if (!session) return reply;
    const operation = await invoke(restoreBackup, { backup_id: request.params.id }, memberCredentials(session), app);
    return reply.redirect(operationPath(operation.id), 303);
  });
}

function backupForms(session: TeamSession, backup: Infer<typeof BackupView>): Html {
  return html`${roleAllows(session, downloadBackup) ? html`<form method="post" action="/panel/backups/${backup.id}/download" class="inline">${csrfField(session)}<button type="submit" aria-label="Download backup ${backup.id}">Download</button></form> ` : ''}
${roleAllows(session, restoreBackup) ? html`<form method="post" action="/panel/backups/${backup.id}/restore" class="inline">${csrfField(session)}<button type="submit" class="danger" aria-label="Restore backup ${backup.id}" aria-describedby="restore-sentence">Restore</button></form>` : ''}`;
}

function size(bytes: number | null): string {
  if (bytes === null) return '—';
  return bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MiB` : `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}
