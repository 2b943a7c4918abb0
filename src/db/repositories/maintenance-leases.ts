// Leases on work one node at a time does (src/engine/row-retention/): a compare-and-set, so of
// two nodes asking at once one gets it; a holder that stops renewing loses it when it expires.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';

/** Takes or renews the lease `name` for `owner` until `until`; false while another owner holds it. */
export async function holdMaintenanceLease(db: Kysely<Database>, name: string, owner: string, now: string, until: string): Promise<boolean> {
  await db.insertInto('maintenance_leases').values({ name, lease_owner: owner, lease_expires_at: until })
    .onConflict((conflict) => conflict.column('name').doNothing()).execute();
  const result = await db.updateTable('maintenance_leases').set({ lease_owner: owner, lease_expires_at: until })
    .where('name', '=', name)
    .where((eb) => eb.or([eb('lease_owner', '=', owner), eb('lease_expires_at', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseMaintenanceLease(db: Kysely<Database>, name: string, owner: string): Promise<void> {
  await db.deleteFrom('maintenance_leases').where('name', '=', name).where('lease_owner', '=', owner).execute();
}
