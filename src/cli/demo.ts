// `npm start` on a fresh checkout: a demo team on the Starter plan with a server, two ERP
// services, an owner and a full-access token. Seeded only into an empty database, so the token
// and password are printed once and never again. Its staging copy is made once the server runs,
// through the API (demo-copy.ts).
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { hashPassword } from '../auth/password.js';
import type { Database } from '../db/tables.js';
import { insertServer } from '../db/repositories/servers.js';
import { insertService } from '../db/repositories/services.js';
import { insertTeam, upsertMember } from '../db/repositories/teams.js';
import { createToken } from '../db/repositories/tokens.js';

export interface DemoSeed {
  teamId: string;
  ownerEmail: string;
  ownerPassword: string;
  token: string;
  /** The service the demo's staging copy is made of. */
  productionId: string;
}

export async function seedDemoIfEmpty(db: Kysely<Database>): Promise<DemoSeed | undefined> {
  const anyTeam = await db.selectFrom('teams').select('id').limit(1).executeTakeFirst();
  if (anyTeam) return undefined;
  const teamId = await insertTeam(db, { name: 'Demo team', plan: 'starter', timezone: 'UTC' });
  const ownerEmail = 'owner@demo.example';
  const ownerPassword = randomBytes(12).toString('base64url');
  const ownerId = await upsertMember(db, { teamId, email: ownerEmail, role: 'owner', passwordHash: await hashPassword(ownerPassword) });
  const serverId = await insertServer(db, { teamId, name: 'local-1' });
  const productionId = await insertService(db, { teamId, serverId, name: 'Production ERP' });
  await insertService(db, { teamId, serverId, name: 'Accounting ERP' });
  const token = await createToken(db, {
    teamId, name: 'Demo full-access token', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [],
    serviceIds: null, serverIds: null, expiresOn: null, createdByUserId: ownerId,
  });
  return { teamId, ownerEmail, ownerPassword, token: token.value, productionId };
}
