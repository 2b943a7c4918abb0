// Seeds the data the list benchmark reads: one team with 200 ERP services (plus copies, backups,
// operations, members, tokens and an audit trail) beside other teams of the same shape, so the
// queries run against tables that look like production rather than an empty schema.
import { createApp, defaultConfig } from '../../src/app.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { createToken } from '../../src/db/repositories/tokens.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import type { Insertable, Kysely } from 'kysely';
import type { Database, ServiceState } from '../../src/db/tables.js';

export interface ListServicesFixture {
  dataDir: string;
  teamId: string;
  /** The bearer value of the token restricted to `restrictedServiceIds`. */
  token: string;
  tokenId: string;
  restrictedServiceIds: string[];
  counts: Record<string, number>;
}

const STATES: ServiceState[] = ['running', 'running', 'running', 'stopped', 'failed'];

async function seedTeam(db: Kysely<Database>, name: string, servers: number, services: number, copies: number) {
  const teamId = await insertTeam(db, { name, plan: 'business', timezone: 'Europe/Paris' });
  const serverIds: string[] = [];
  for (let i = 0; i < servers; i++) serverIds.push(await insertServer(db, { teamId, name: `${name} server ${i + 1}` }));
  const serviceIds: string[] = [];
  for (let i = 0; i < services; i++) {
    serviceIds.push(await insertService(db, {
      teamId, serverId: serverIds[i % servers]!, name: `${name} ERP ${i + 1}`, state: STATES[i % STATES.length]!,
    }));
  }
  const copyIds: string[] = [];
  for (let i = 0; i < copies; i++) {
    const parent = serviceIds[(i * 3) % services]!;
    copyIds.push(await insertService(db, { teamId, serverId: serverIds[i % servers]!, name: `${name} copy ${i + 1}`, parentId: parent }));
  }
  // Running services have an address.
  let port = 20000;
  for (const id of serviceIds) {
    await db.updateTable('erp_services').set({ port: port++ }).where('id', '=', id).where('state', '=', 'running').execute();
  }
  return { teamId, serverIds, serviceIds, copyIds };
}

/** Backups, operations and audit rows, inserted in bulk (no repository writes them yet). */
async function seedHistory(db: Kysely<Database>, teamId: string, serviceIds: string[], tokenId: string) {
  const now = nowIso();
  const backups: Database['backups'][] = [];
  const operations: Insertable<Database['operations']>[] = [];
  const audit: Database['audit_log'][] = [];
  for (const serviceId of serviceIds) {
    for (let i = 0; i < 3; i++) {
      backups.push({
        id: newId('bak'), team_id: teamId, service_id: serviceId, state: 'completed', kind: 'manual', size_bytes: 1_048_576,
        sha256: 'a'.repeat(64), file_path: `/var/backups/${serviceId}-${i}.db.gz`, operation_id: null, reason: null,
        created_at: now, completed_at: now,
      });
    }
    for (const kind of ['create', 'start', 'backup', 'redeploy', 'stop']) {
      operations.push({
        id: newId('op'), team_id: teamId, kind, service_id: serviceId, server_id: null, state: 'succeeded', reason: null,
        parameters: '{}', result: null, requested_by_token_id: tokenId, requested_channel: 'api', idempotency_key: null,
        request_fingerprint: null, lease_owner: null, lease_expires_at: null, created_at: now, started_at: now, decision_id: null, finished_at: now,
      });
    }
    for (let i = 0; i < 10; i++) {
      audit.push({
        id: newId('aud'), team_id: teamId, at: now, actor_type: 'token', actor_id: tokenId, channel: i % 2 ? 'api' : 'mcp',
        action: 'start_erp_service', target_type: 'service', target_id: serviceId, outcome: 'allowed', code: null, detail: null,
      });
    }
  }
  await db.transaction().execute(async (trx) => {
    for (const [table, rows] of [['backups', backups], ['operations', operations], ['audit_log', audit]] as const) {
      for (let start = 0; start < rows.length; start += 40) {
        await trx.insertInto(table).values(rows.slice(start, start + 40) as never).execute();
      }
    }
  });
  return { backups: backups.length, operations: operations.length, audit: audit.length };
}

/** Seeds SQLite in `dataDir`, or the PostgreSQL database at `databaseUrl` when given. */
export async function seedListServices(dataDir: string, databaseUrl?: string): Promise<ListServicesFixture> {
  const app = createApp({ ...defaultConfig(dataDir), database: databaseUrl ? { url: databaseUrl, poolSize: 4 } : undefined });
  try {
    const db = app.db.kysely;
    const counts: Record<string, number> = { teams: 0, servers: 0, services: 0, copies: 0, tokens: 0, backups: 0, operations: 0, audit: 0 };

    const ours = await seedTeam(db, 'Bench team', 10, 200, 60);
    counts.teams! += 1; counts.servers! += 10; counts.services! += 200; counts.copies! += 60;
    for (const [i, role] of (['owner', 'admin', 'member', 'member'] as const).entries()) {
      await upsertMember(db, { teamId: ours.teamId, email: `person${i}@bench.example`, role, passwordHash: null });
    }

    // The measured token: three read permissions, expiring next year (so the expiry check runs),
    // restricted to every tenth service (so the list has to skip the other 180).
    const restrictedServiceIds = ours.serviceIds.filter((_, i) => i % 10 === 0);
    const expiresOn = `${new Date().getUTCFullYear() + 1}-12-31`;
    const measured = await createToken(db, {
      teamId: ours.teamId, name: 'bench restricted', source: 'panel', acceptedBy: 'both', fullAccess: false,
      permissions: ['services:read', 'servers:read', 'backups:read'], serviceIds: restrictedServiceIds, serverIds: null,
      expiresOn, createdByUserId: null,
    });
    // Other tokens of the team: full access, other restrictions, revoked ones.
    for (let i = 0; i < 30; i++) {
      await createToken(db, {
        teamId: ours.teamId, name: `other ${i}`, source: i % 3 === 0 ? 'cli' : 'panel', acceptedBy: 'both',
        fullAccess: i % 2 === 0, permissions: i % 2 === 0 ? [] : ['services:read'],
        serviceIds: i % 5 === 1 ? ours.serviceIds.slice(i, i + 7) : null, serverIds: i % 7 === 3 ? ours.serverIds.slice(0, 2) : null,
        expiresOn: null, createdByUserId: null,
      });
    }
    counts.tokens! += 31;
    const history = await seedHistory(db, ours.teamId, [...ours.serviceIds, ...ours.copyIds], measured.id);
    counts.backups! += history.backups; counts.operations! += history.operations; counts.audit! += history.audit;

    // Neighbours: other teams with their own services and tokens.
    for (let t = 0; t < 20; t++) {
      const other = await seedTeam(db, `Neighbour ${t + 1}`, 2, 25, 5);
      counts.teams! += 1; counts.servers! += 2; counts.services! += 25; counts.copies! += 5;
      const token = await createToken(db, {
        teamId: other.teamId, name: 'neighbour', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [],
        serviceIds: null, serverIds: null, expiresOn: null, createdByUserId: null,
      });
      counts.tokens! += 1;
      const more = await seedHistory(db, other.teamId, other.serviceIds.slice(0, 10), token.id);
      counts.backups! += more.backups; counts.operations! += more.operations; counts.audit! += more.audit;
    }
    return { dataDir, teamId: ours.teamId, token: measured.value, tokenId: measured.id, restrictedServiceIds, counts };
  } finally {
    await app.close();
  }
}
