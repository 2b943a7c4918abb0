// The service page's line on its restore drills (src/offsite/restore-drills): when a backup of it
// was last proven to restore, and, when the latest drill failed, what failed. Nothing for a copy,
// whose backups are not drilled.
import type { Kysely } from 'kysely';
import { lastEndedDrillOf } from '../db/repositories/restore-drills.js';
import type { Database } from '../db/tables.js';
import { html, type Html } from './html.js';

export async function restoreDrillFact(db: Kysely<Database>, service: { id: string; parent_id: string | null }): Promise<Html | ''> {
  if (service.parent_id !== null) return '';
  const [last, proven] = await Promise.all([
    lastEndedDrillOf(db, service.id),
    db.selectFrom('backups').select(['id', 'verified_at']).where('service_id', '=', service.id).where('verified_at', 'is not', null)
      .orderBy('verified_at', 'desc').limit(1).executeTakeFirst(),
  ]);
  const provenText = proven ? html`Last proven to restore ${proven.verified_at} (backup <span class="muted">${proven.id}</span>).`
    : html`<span class="muted">No backup proven to restore yet: a restore drill runs weekly once the team has an off-site destination.</span>`;
  const failed = last?.state === 'failed' ? html` <span class="error">The latest drill (${last.ended_at}, backup ${last.backup_id}) failed: ${last.reason ?? ''}</span>` : '';
  return html`<tr><th>Restore drill</th><td data-restore-drill>${provenText}${failed}</td></tr>`;
}
