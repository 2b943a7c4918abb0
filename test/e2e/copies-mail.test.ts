// Copies over REST with the engine and the mail catcher running: a copy is made from its
// service's current data, runs as its own process, and its password-reset email is kept by the
// mail catcher (whatever its own outgoing-mail setting says), readable with mailcatcher:read only.
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSION_IDS } from '../../src/auth/permissions.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, fetchText, killProcessesMatching, processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { startSmtpSink, type SmtpSink } from '../engine/support/smtp-sink.js';

describe('copies of an ERP service', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let sink: SmtpSink;
  let copyId: string;
  let copyUrl: string;

  const databaseOf = (serviceId: string, serverId = team.serverIds[0]) => join(server.dataDir, 'servers', serverId, serviceId, 'erp.sqlite');
  const addCustomer = (serviceId: string, name: string) => {
    const db = new SQLite(databaseOf(serviceId));
    db.pragma('busy_timeout = 5000');
    db.prepare("INSERT INTO customers (name, city) VALUES (?, 'Mons')").run(name);
    db.close();
  };
  const customerNames = (serviceId: string): string[] => {
    const db = new SQLite(databaseOf(serviceId), { readonly: true });
    const names = (db.prepare('SELECT name FROM customers ORDER BY id').all() as { name: string }[]).map((row) => row.name);
    db.close();
    return names;
  };

  beforeAll(async () => {
    server = await startTestServer({
      engine: { pollMs: 100, reconcileIntervalMs: 0 }, mail: { host: '127.0.0.1', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 },
    }, {}, { engine: true });
    await server.app.mailCatcher.start();
    sink = await startSmtpSink();
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.serviceIds[0]}/start`);
    addCustomer(team.serviceIds[0], 'Before the copy');
  });
  afterAll(async () => {
    const dataDir = server.dataDir;
    await sink.close();
    await server.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  it('POST /api/service-erp/{id}/copies answers 202 with the operation, then the copy exists, stopped, with the data of that moment', async () => {
    const [parentId] = team.serviceIds;
    const writer = (await makeToken(server.app, team.teamId, { permissions: ['services:write'] })).value;
    const accepted = await send(server.baseUrl, 'POST', `/api/service-erp/${parentId}/copies`, writer, { name: 'Staging' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ kind: 'copy', state: 'queued', backup_id: null });
    expect(accepted.headers.get('location')).toBe(`/api/operations/${accepted.body.id}`);
    copyId = accepted.body.service_id;
    expect(copyId).not.toBe(parentId);
    expect((await waitForOperation(server.baseUrl, token, accepted.body.id)).state).toBe('succeeded');
    addCustomer(parentId, 'After the copy');

    const copy = (await send(server.baseUrl, 'GET', `/api/service-erp/${copyId}`, token)).body;
    expect(copy).toMatchObject({ name: 'Staging', state: 'stopped', parent_id: parentId, is_copy: true, server_id: team.serverIds[0] });
    const listed = await getJson(server.baseUrl, `/api/service-erp/${parentId}/copies`, token);
    expect(listed.body.data.map((item: { id: string }) => item.id)).toContain(copyId);
    expect(customerNames(copyId)).toContain('Before the copy');
    expect(customerNames(copyId)).not.toContain('After the copy');
    expect(customerNames(parentId)).toContain('After the copy');

    const created = await server.app.db.kysely.selectFrom('events').select(['type', 'payload'])
      .where('team_id', '=', team.teamId).where('type', '=', 'copy.created').execute();
    expect(created).toHaveLength(1);
    expect(JSON.parse(created[0]?.payload as string).data).toMatchObject({
      service: { id: copyId, parent_id: parentId, state: 'stopped' }, operation_id: accepted.body.id,
    });
  });

  it('keeps the copy\'s password-reset email in the mail catcher, even when its outgoing mail names another server', async () => {
    // Someone points the copy at a real relay: the engine still sends its mail only to the catcher.
    await server.app.db.kysely.updateTable('erp_services').set({ outgoing_smtp: `127.0.0.1:${sink.port}` }).where('id', '=', copyId).execute();
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${copyId}/start`);
    copyUrl = (await send(server.baseUrl, 'GET', `/api/service-erp/${copyId}`, token)).body.url;
    const reset = await fetch(`${copyUrl}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(reset.status).toBe(200);
    expect(sink.messages).toEqual([]);

    const reader = (await makeToken(server.app, team.teamId, { permissions: ['mailcatcher:read'] })).value;
    const list = await getJson(server.baseUrl, `/api/service-erp/${copyId}/emails`, reader);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ copy_id: copyId, subject: 'Reset your password for Staging', recipients: ['admin@example.com'] });
    const email = await getJson(server.baseUrl, `/api/emails/${list.body.data[0].id}`, reader);
    const link = /http:\/\/\S+\/web\/reset_password\?token=\S+/.exec(email.body.text_body)?.[0] as string;
    expect(link.startsWith(`${copyUrl}web/reset_password?token=`)).toBe(true);
    const page = await fetchText(link);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="password"');
  });

  it('refuses the caught emails to a token with any other permission', async () => {
    const emails = await getJson(server.baseUrl, `/api/service-erp/${copyId}/emails`, token);
    const emailId = emails.body.data[0].id as string;
    for (const permission of PERMISSION_IDS.filter((id) => id !== 'mailcatcher:read')) {
      const other = (await makeToken(server.app, team.teamId, { permissions: [permission] })).value;
      for (const path of [`/api/service-erp/${copyId}/emails`, `/api/emails/${emailId}`, `/api/emails/${emailId}/raw`]) {
        const refused = await getJson(server.baseUrl, path, other);
        expect(refused.status, `${permission} ${path}`).toBe(403);
        expect(refused.body.detail).toBe('This API token does not have the mailcatcher:read scope.');
      }
    }
  });

  it('lets a token restricted to the parent read its copy\'s emails', async () => {
    const restricted = (await makeToken(server.app, team.teamId, { permissions: ['mailcatcher:read'], services: [team.serviceIds[0]] })).value;
    expect((await getJson(server.baseUrl, `/api/service-erp/${copyId}/emails`, restricted)).body.data).toHaveLength(1);
  });

  it('DELETE /api/service-erp/{copy} deletes the copy (copy.deleted) and leaves its service running', async () => {
    const done = await act(server.baseUrl, token, 'DELETE', `/api/service-erp/${copyId}`);
    expect(done.state).toBe('succeeded');
    expect(processesMatching(copyId)).toEqual([]);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${copyId}`, token)).status).toBe(404);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${team.serviceIds[0]}`, token)).body.state).toBe('running');
    const deleted = await server.app.db.kysely.selectFrom('events').select('type')
      .where('payload', 'like', `%${done.id}%`).where('type', 'like', '%.deleted').execute();
    expect(deleted.map((event) => event.type)).toEqual(['copy.deleted']);
  });

  it('makes a copy of a copy another copy of the same service', async () => {
    const first = await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.serviceIds[0]}/copies`, {});
    const second = await act(server.baseUrl, token, 'POST', `/api/service-erp/${first.service_id}/copies`, {});
    expect(second.state).toBe('succeeded');
    const copy = (await send(server.baseUrl, 'GET', `/api/service-erp/${second.service_id}`, token)).body;
    expect(copy).toMatchObject({ parent_id: team.serviceIds[0], name: 'ERP A (copy) (copy)' });
  });
});
