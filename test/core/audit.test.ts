// Every denial leaves an audit row with its precise reason; reads only touch last-used, throttled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/core/audit.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

describe('audit trail', () => {
  let server: TestServer;
  let team: SeededTeam;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
  });
  afterAll(async () => { await server.close(); });

  const rowsFor = async (tokenId: string) => {
    await server.app.audit.flush();
    return server.app.db.kysely.selectFrom('audit_log').selectAll().where('actor_id', '=', tokenId).orderBy('id').execute();
  };

  it('flush() writes what was recorded before it even while an earlier write is still running', async () => {
    const audit = new AuditLog(server.app.db.kysely, { flushIntervalMs: 3_600_000 });
    const entry = (action: string) => ({
      team_id: team.teamId, actor_type: 'operator' as const, actor_id: null, channel: 'cli', action,
      target_type: null, target_id: null, outcome: 'allowed' as const, code: null, detail: null,
    });
    audit.record(entry('flush_first'));
    const first = audit.flush();
    audit.record(entry('flush_second'));
    await audit.flush();
    const rows = await server.app.db.kysely.selectFrom('audit_log').select('action')
      .where('action', 'in', ['flush_first', 'flush_second']).orderBy('id').execute();
    expect(rows.map((row) => row.action)).toEqual(['flush_first', 'flush_second']);
    await first;
    await audit.close();
  });

  it('records a missing permission as a denial with its code', async () => {
    const token = await makeToken(server.app, team.teamId, { permissions: ['servers:read'] });
    await getJson(server.baseUrl, '/api/service-erp', token.value);
    const rows = await rowsFor(token.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      team_id: team.teamId, actor_type: 'token', channel: 'api', action: 'list_erp_services', outcome: 'denied', code: 'missing_permission',
    });
  });

  it('records the precise reason for a revoked token, which the client never sees', async () => {
    const token = await makeToken(server.app, team.teamId);
    await revokeToken(server.app.db.kysely, token.id);
    const { body } = await getJson(server.baseUrl, '/api/service-erp', token.value);
    expect(body.detail).not.toContain('revoked.');
    const rows = await rowsFor(token.id);
    expect(rows[0]).toMatchObject({ outcome: 'denied', code: 'invalid_token', detail: 'revoked' });
  });

  it('records an unknown token as an anonymous denial', async () => {
    await getJson(server.baseUrl, '/api/servers', 'tinf_made_up');
    await server.app.audit.flush();
    const row = await server.app.db.kysely.selectFrom('audit_log').selectAll()
      .where('actor_type', '=', 'anonymous').where('detail', '=', 'malformed').executeTakeFirst();
    expect(row).toMatchObject({ action: 'list_servers', outcome: 'denied', code: 'invalid_token' });
  });

  it('writes no row per read, but records when and through which channel the token was last used', async () => {
    const token = await makeToken(server.app, team.teamId);
    for (let index = 0; index < 5; index += 1) await getJson(server.baseUrl, '/api/service-erp', token.value);
    expect(await rowsFor(token.id)).toHaveLength(0);
    const stored = await server.app.db.kysely.selectFrom('api_tokens').select(['last_used_at', 'last_used_channel'])
      .where('id', '=', token.id).executeTakeFirstOrThrow();
    expect(stored.last_used_channel).toBe('api');
    expect(Date.now() - Date.parse(stored.last_used_at as string)).toBeLessThan(60_000);
  });
});
