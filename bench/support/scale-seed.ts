// Seeds one team at a chosen size for the panel-scale benchmark: its ERP services (every tenth
// with a copy), servers, tokens, an owner with a panel session, and a history in proportion
// (per service: 20 operations, 100 audit rows, 20 events). At 10,000 services that is 200,000
// operations, 1,000,000 audit rows and 200,000 events. Rows go in through prepared statements in
// one transaction per table, as no repository writes history in bulk.
import { createApp, defaultConfig } from '../../src/app.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { createSession } from '../../src/db/repositories/panel-sessions.js';
import { indexServiceNames } from '../../src/db/repositories/service-name-search.js';
import { createToken } from '../../src/db/repositories/tokens.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';

export interface ScaleFixture {
  services: number;
  /** The owner's panel session cookie value. */
  ownerCookie: string;
  /** A member of another, small team (20 services): whose answers a flood from the owner must not hold up. */
  neighbourCookie: string;
  /** Full access. */
  fullToken: string;
  /** Limited to two services (and their copies), services:read. */
  restrictedToken: string;
  /** Without services:read: it lists only the operations it requested itself. */
  requesterToken: string;
  editTokenId: string;
  /** A service with a copy, and the name a search finds it by. */
  serviceId: string;
  searchedName: string;
  seconds: number;
  counts: Record<string, number>;
}

const STATES = ['running', 'running', 'running', 'stopped', 'failed'] as const;
const KINDS = ['start', 'stop', 'redeploy', 'backup'] as const;

export async function seedScale(dataDir: string, services: number): Promise<ScaleFixture> {
  const started = performance.now();
  const app = createApp(defaultConfig(dataDir));
  try {
    await app.db.ready();
    const db = app.db.kysely;
    const sqlite = app.db.sqlite;
    if (!sqlite) throw new Error('the scale benchmark seeds SQLite');
    const teamId = await insertTeam(db, { name: 'Hosting company', plan: 'business', timezone: 'Europe/Paris' });
    const ownerId = await upsertMember(db, { teamId, email: 'owner@scale.example', role: 'owner', passwordHash: null });
    const now = nowIso();

    // At least 20 servers, so a page of 20 servers is a full page at both sizes.
    const serverIds = Array.from({ length: Math.max(20, services / 100) }, () => newId('srv'));
    const serviceIds = Array.from({ length: services }, () => newId('svc'));
    const copyIds = serviceIds.filter((_, i) => i % 10 === 0).map(() => newId('svc'));
    sqlite.transaction(() => {
      const server = sqlite.prepare('INSERT INTO servers (id, team_id, name, capacity, state, created_at) VALUES (?, ?, ?, 200, \'ready\', ?)');
      serverIds.forEach((id, i) => server.run(id, teamId, `host-${i + 1}`, now));
      const service = sqlite.prepare(`INSERT INTO erp_services (id, team_id, server_id, parent_id, name, state, revision, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)`);
      serviceIds.forEach((id, i) => service.run(id, teamId, serverIds[i % serverIds.length], null, `Customer ${i + 1} ERP`, STATES[i % STATES.length], now, now));
      copyIds.forEach((id, i) => service.run(id, teamId, serverIds[i % serverIds.length], serviceIds[i * 10], `Customer ${i * 10 + 1} staging`, 'stopped', now, now));
    })();
    // Services inserted by hand get their name's pieces as every insertService writes them.
    await indexServiceNames(db);

    const token = (name: string, fullAccess: boolean, permissions: string[], serviceIdsOfToken: string[] | null) => createToken(db, {
      teamId, name, source: 'panel', acceptedBy: 'both', fullAccess, permissions: permissions as never, serviceIds: serviceIdsOfToken,
      serverIds: null, expiresOn: null, createdByUserId: ownerId,
    });
    const full = await token('deploy robot', true, [], null);
    const restricted = await token('customer 1 dashboard', false, ['services:read', 'servers:read', 'backups:read'], [serviceIds[0]!, serviceIds[services - 1]!]);
    const requester = await token('status writer', false, ['servers:read'], null);
    // Other tokens as a team keeps them: some limited to a few services, named on the API Tokens page.
    for (let i = 0; i < 27; i++) {
      await token(`assistant ${i + 1}`, i % 2 === 0, i % 2 === 0 ? [] : ['services:read'], i % 3 === 0 ? serviceIds.slice(i * 7 % services, i * 7 % services + 5) : null);
    }

    const operations = services * 20;
    const audit = services * 100;
    const events = services * 20;
    sqlite.transaction(() => {
      const operation = sqlite.prepare(`INSERT INTO operations (id, team_id, kind, service_id, server_id, state, parameters, requested_by_token_id,
        requested_channel, created_at, started_at, finished_at) VALUES (?, ?, ?, ?, ?, 'succeeded', '{}', ?, 'api', ?, ?, ?)`);
      for (let i = 0; i < operations; i++) {
        // One in twenty is a server's own (no service); the requester token asked ten of them in all.
        const aboutServer = i % 20 === 19;
        const requestedBy = i % (operations / 10) === 5 ? requester.id : full.id;
        operation.run(newId('op'), teamId, aboutServer ? 'create_server' : KINDS[i % KINDS.length], aboutServer ? null : serviceIds[i % services],
          aboutServer ? serverIds[i % serverIds.length] : null, requestedBy, now, now, now);
      }
    })();
    sqlite.transaction(() => {
      const row = sqlite.prepare(`INSERT INTO audit_log (id, team_id, at, actor_type, actor_id, channel, action, target_type, target_id, outcome)
        VALUES (?, ?, ?, 'token', ?, ?, 'start_erp_service', 'service', ?, 'allowed')`);
      for (let i = 0; i < audit; i++) row.run(newId('aud'), teamId, now, full.id, i % 2 ? 'api' : 'mcp', serviceIds[i % services]);
    })();
    sqlite.transaction(() => {
      const row = sqlite.prepare('INSERT INTO events (id, team_id, type, payload, created_at, dispatched_at) VALUES (?, ?, ?, ?, ?, ?)');
      for (let i = 0; i < events; i++) {
        const data = { id: serviceIds[i % services], state: 'running' };
        row.run(newId('evt'), teamId, 'erp_service.started', JSON.stringify({ type: 'erp_service.started', timestamp: now, data }), now, now);
      }
    })();
    // No ANALYZE: `serve` never runs it, so the plans measured are the ones a team gets.
    sqlite.pragma('wal_checkpoint(TRUNCATE)');

    const ownerCookie = await createSession(db, ownerId, teamId);
    const neighbourTeamId = await insertTeam(db, { name: 'Neighbour', plan: 'business', timezone: 'UTC' });
    const neighbourId = await upsertMember(db, { teamId: neighbourTeamId, email: 'member@neighbour.example', role: 'member', passwordHash: null });
    sqlite.transaction(() => {
      const server = newId('srv');
      sqlite.prepare('INSERT INTO servers (id, team_id, name, capacity, state, created_at) VALUES (?, ?, \'neighbour-host\', 200, \'ready\', ?)').run(server, neighbourTeamId, now);
      const service = sqlite.prepare(`INSERT INTO erp_services (id, team_id, server_id, parent_id, name, state, revision, created_at, updated_at)
        VALUES (?, ?, ?, NULL, ?, 'running', 1, ?, ?)`);
      for (let i = 0; i < 20; i++) service.run(newId('svc'), neighbourTeamId, server, `Neighbour ${i + 1} ERP`, now, now);
    })();
    await indexServiceNames(db);
    const neighbourCookie = await createSession(db, neighbourId, neighbourTeamId);
    const searchedIndex = Math.floor(services * 0.73) - (Math.floor(services * 0.73) % 10);
    return {
      services, ownerCookie, neighbourCookie, fullToken: full.value, restrictedToken: restricted.value, requesterToken: requester.value, editTokenId: restricted.id,
      serviceId: serviceIds[0]!, searchedName: `Customer ${searchedIndex + 1} ERP`,
      seconds: (performance.now() - started) / 1000,
      counts: { servers: serverIds.length, services, copies: copyIds.length, tokens: 30, operations, audit, events },
    };
  } finally {
    await app.close();
  }
}
