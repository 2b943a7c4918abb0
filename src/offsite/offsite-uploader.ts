// Sends every completed backup off-site (schema.sql, backup_offsite_copies): on every tick, any
// node takes the copies that are due under a lease it renews while it uploads, so one node
// uploads each copy at a time; a node killed mid-upload leaves the copy pending, and once its
// lease ran out the next tick (here or on another node) begins it again, ending the parts the
// killed attempt left in the store first. A failure is retried with back-off (retryDelayMs,
// x4 each time, at most 6 h apart) while the store could not be reached, and up to maxAttempts
// tries; a store that refused (credentials, bucket) fails the copy at once, until the team
// saves its destination again. One backup.offsite_failed event at the first failure of a copy
// and one when it fails for good, never one per retry; backup.offsite_stored once stored.
import type { Db } from '../db/connect.js';
import { nowIso } from '../db/ids.js';
import { findBackupById } from '../db/repositories/backups.js';
import { insertEvent } from '../db/repositories/events.js';
import { dueOffsiteCopies, renewOffsiteLease, takeOffsiteLease, type OffsiteCopyRow } from '../db/repositories/offsite-copies.js';
import type { OffsiteCopyState } from '../db/tables.js';
import { isLeaseOwnerGone, newLeaseOwner, retireLeaseOwner } from '../engine/lease-owner.js';
import { PeriodicPass } from '../engine/periodic-pass.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import { startOffsiteFailedIncident } from '../health/state-incidents.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { pruneOffsiteCopies } from './offsite-pruning.js';
import { StoreFailure } from './store-failure.js';
import { uploadOffsiteCopy, type OffsiteSource } from './upload-backup.js';

export interface OffsiteUploaderOptions {
  /** How often due copies are looked for; 0: only when tick() is called. */
  intervalMs: number;
  leaseMs: number;
  /** The wait after a first failure; each next one is four times longer, at most MAX_DELAY_MS. */
  retryDelayMs: number;
  maxAttempts: number;
  onError(error: unknown, context: string): void;
}

export const DEFAULT_OFFSITE_OPTIONS = { intervalMs: 5_000, leaseMs: 60_000, retryDelayMs: 60_000, maxAttempts: 10 };
const MAX_DELAY_MS = 6 * 3_600_000;
const BATCH = 4;
const INTERNAL = 'The upload failed because of an internal error; it has been logged.';

export class OffsiteUploader {
  private readonly passes: PeriodicPass<void>;
  private readonly owner = newLeaseOwner();
  private readonly closing = new AbortController();

  constructor(private readonly db: Db, private readonly secrets: SecretBox, private readonly source: OffsiteSource, private readonly options: OffsiteUploaderOptions) {
    this.passes = new PeriodicPass(() => this.pass(), { ...options, atStart: true, what: 'sending backups off-site' });
  }

  start(): void {
    this.passes.start();
  }

  /** One pass: removes what retention let go, then uploads the copies due; resolves when done (one pass at a time). */
  tick(): Promise<void> {
    return this.passes.tick();
  }

  /** Stops taking copies and interrupts the upload in progress (its copy stays pending, taken again at the next start). */
  async close(): Promise<void> {
    this.closing.abort();
    await this.passes.stop();
    retireLeaseOwner(this.owner);
  }

  private async pass(): Promise<void> {
    await pruneOffsiteCopies(this.db.kysely, this.secrets, this.options.onError);
    while (!this.closing.signal.aborted) {
      const due = await dueOffsiteCopies(this.db.kysely, nowIso(), BATCH);
      let taken = 0;
      for (const copy of due) {
        if (this.closing.signal.aborted) return;
        if (!takeable(copy)) continue;
        const until = new Date(Date.now() + this.options.leaseMs).toISOString();
        if (!(await takeOffsiteLease(this.db.kysely, copy, this.owner, until))) continue;
        taken += 1;
        await this.attempt(copy);
      }
      if (taken === 0 || due.length < BATCH) return;
    }
  }

  private async attempt(copy: OffsiteCopyRow): Promise<void> {
    const db = this.db.kysely;
    const backup = await findBackupById(db, copy.backup_id);
    // Removed by retention meanwhile (pruning deletes its copy), or not a finished backup: nothing to send.
    if (!backup || backup.state !== 'completed' || !backup.file_path || !backup.sha256) {
      await db.updateTable('backup_offsite_copies').set({ lease_owner: null, lease_expires_at: null })
        .where('backup_id', '=', copy.backup_id).where('lease_owner', '=', this.owner).execute();
      return;
    }
    const renewal = setInterval(() => {
      renewOffsiteLease(db, copy.backup_id, this.owner, new Date(Date.now() + this.options.leaseMs).toISOString())
        .catch((error: unknown) => this.options.onError(error, `renewing the lease of off-site copy ${copy.backup_id}`));
    }, Math.max(100, Math.floor(this.options.leaseMs / 3)));
    try {
      const sizeBytes = await uploadOffsiteCopy(db, this.secrets, this.source, copy, { file_path: backup.file_path, sha256: backup.sha256 }, this.closing.signal);
      await this.end(copy, backup.kind, { state: 'stored', reason: null, sizeBytes });
    } catch (error) {
      // Interrupted by close(): the lease runs out and the next start takes it again.
      if (this.closing.signal.aborted) return;
      if (!(error instanceof StoreFailure) || error.sentence.includes('internal error')) this.options.onError(error, `uploading off-site copy ${copy.backup_id}`);
      const failure = error instanceof StoreFailure ? error : new StoreFailure(INTERNAL, true, { cause: error });
      const attempts = copy.attempts + 1;
      const final = !failure.transient || attempts >= this.options.maxAttempts;
      await this.end(copy, backup.kind, { state: final ? 'failed' : 'pending', reason: failure.sentence, attempts, announce: final || copy.attempts === 0 });
    } finally {
      clearInterval(renewal);
    }
  }

  /** Writes how the attempt ended, with its event, only while this uploader still holds the copy (a new destination may have taken it back). */
  private async end(
    copy: OffsiteCopyRow, kind: string,
    outcome: { state: OffsiteCopyState; reason: string | null; sizeBytes?: number; attempts?: number; announce?: boolean },
  ): Promise<void> {
    const at = nowIso();
    const delay = Math.min(MAX_DELAY_MS, this.options.retryDelayMs * 4 ** Math.max(0, (outcome.attempts ?? 1) - 1));
    await inWriteTransaction(this.db.kysely, async (trx) => {
      const updated = await trx.updateTable('backup_offsite_copies').set({
        state: outcome.state, reason: outcome.reason, lease_owner: null, lease_expires_at: null,
        ...(outcome.state === 'stored' ? { size_bytes: outcome.sizeBytes ?? null, stored_at: at } : {}),
        ...(outcome.attempts !== undefined ? { attempts: outcome.attempts } : {}),
        ...(outcome.state === 'pending' ? { next_attempt_at: new Date(Date.now() + delay).toISOString() } : {}),
      }).where('backup_id', '=', copy.backup_id).where('lease_owner', '=', this.owner).where('destination_id', '=', copy.destination_id).executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1 || (outcome.state !== 'stored' && !outcome.announce)) return;
      await insertEvent(trx, {
        teamId: copy.team_id, type: outcome.state === 'stored' ? 'backup.offsite_stored' : 'backup.offsite_failed', at,
        data: { backup: { id: copy.backup_id, service_id: copy.service_id, kind }, location: { kind: 'offsite', state: outcome.state, reason: outcome.reason } },
      });
      if (outcome.state !== 'stored') await startOffsiteFailedIncident(trx, { service_id: copy.service_id, kind, reason: outcome.reason }, at);
    });
  }
}

/** Free, run out, or held by a process of this host that is gone (a `serve` killed mid-upload): taken at once, not after its lease. */
function takeable(copy: OffsiteCopyRow): boolean {
  return copy.lease_owner === null || copy.lease_expires_at === null || copy.lease_expires_at < nowIso() || isLeaseOwnerGone(copy.lease_owner);
}
