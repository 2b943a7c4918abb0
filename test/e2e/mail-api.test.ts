// Reading what a copy's mail catcher kept, over REST: list, read, download the raw message,
// and the single-use link that MCP clients receive instead of bytes.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoke } from '../../src/core/invoke.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { MailCatcher } from '../../src/mail/mail-catcher.js';
import { issueMailCredentials } from '../../src/mail/mail-credentials.js';
import { catalog } from '../../tools/index.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

describe('mail catcher API', () => {
  let server: TestServer;
  let team: SeededTeam;
  let catcher: MailCatcher;
  let reader: string;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    catcher = new MailCatcher(server.app.db.kysely, { host: '127.0.0.1', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 100 });
    await catcher.start();
    const credentials = await issueMailCredentials(server.app.db.kysely, team.copyId);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: catcher.port, secure: false, ignoreTLS: true, auth: { user: credentials.username, pass: credentials.password } });
    for (const subject of ['First', 'Second']) {
      await transport.sendMail({ from: 'erp@copy.example', to: 'admin@example.com', subject, text: `${subject}: http://copy/reset?token=${subject}` });
    }
    reader = (await makeToken(server.app, team.teamId, { permissions: ['mailcatcher:read'], services: [team.serviceIds[0]] })).value;
  });
  afterAll(async () => {
    await catcher.stop();
    await server.close();
  });

  it('lists a copy\'s emails newest first to a token with mailcatcher:read that reaches the parent', async () => {
    const { status, body } = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails`, reader);
    expect(status).toBe(200);
    expect(body.data.map((email: { subject: string }) => email.subject)).toEqual(['Second', 'First']);
    expect(body.data[0]).toMatchObject({ copy_id: team.copyId, sender: 'erp@copy.example', recipients: ['admin@example.com'] });
  });

  it('pages newest first', async () => {
    const first = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails?limit=1`, reader);
    const second = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails?limit=1&cursor=${first.body.next_cursor}`, reader);
    expect([first.body.data[0].subject, second.body.data[0].subject]).toEqual(['Second', 'First']);
    expect(second.body.next_cursor).toBeNull();
  });

  it('answers 404 for a production service: only copies have a mail catcher', async () => {
    const { status, body } = await getJson(server.baseUrl, `/api/service-erp/${team.serviceIds[0]}/emails`, reader);
    expect(status).toBe(404);
    expect(body.detail).toBe('This is an ERP service, not a copy: only copies have a mail catcher.');
  });

  it('reads one email with its body, including the reset link', async () => {
    const list = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails`, reader);
    const { body } = await getJson(server.baseUrl, `/api/emails/${list.body.data[0].id}`, reader);
    expect(body.text_body).toContain('http://copy/reset?token=Second');
  });

  it('downloads the raw .eml, whole or by range', async () => {
    const list = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails`, reader);
    const id = list.body.data[0].id;
    const whole = await fetch(`${server.baseUrl}/api/emails/${id}/raw`, { headers: { Authorization: `Bearer ${reader}` } });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('message/rfc822');
    expect(whole.headers.get('content-disposition')).toBe(`attachment; filename="${id}.eml"`);
    const text = await whole.text();
    expect(text).toContain('Subject: Second');
    expect(Number(whole.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const part = await fetch(`${server.baseUrl}/api/emails/${id}/raw`, { headers: { Authorization: `Bearer ${reader}`, Range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${Buffer.byteLength(text)}`);
    expect(await part.text()).toBe(text.slice(0, 10));
  });

  it('refuses every other permission with the mailcatcher:read sentence', async () => {
    const other = (await makeToken(server.app, team.teamId, { permissions: ['services:write', 'backups:download', 'backups:restore'] })).value;
    const { status, body } = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails`, other);
    expect(status).toBe(403);
    expect(body.detail).toBe('This API token does not have the mailcatcher:read scope.');
  });

  it('gives MCP a single-use link that stops working when the token is revoked', async () => {
    const token = await makeToken(server.app, team.teamId, { permissions: ['mailcatcher:read'] });
    const download = catalog.find((capability) => capability.name === 'download_caught_email')!;
    const list = await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails`, token.value);
    const deps = { ...server.app, publicUrl: server.baseUrl };
    const link = await invoke(download, { email_id: list.body.data[1].id }, { bearer: token.value, channel: 'mcp' }, deps) as { download_url: string };
    expect(link.download_url).toMatch(new RegExp(`^${server.baseUrl}/downloads/`));
    const fetched = await fetch(link.download_url);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toContain('Subject: First');
    expect((await fetch(link.download_url)).status).toBe(404);

    const second = await invoke(download, { email_id: list.body.data[1].id }, { bearer: token.value, channel: 'mcp' }, deps) as { download_url: string };
    await revokeToken(server.app.db.kysely, token.id);
    expect((await fetch(second.download_url)).status).toBe(404);
  });
});
