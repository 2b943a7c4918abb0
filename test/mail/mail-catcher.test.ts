// The mail catcher as a real SMTP listener, spoken to by a real SMTP client (nodemailer) and by
// a raw socket sending garbage.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailCatcher } from '../../src/mail/mail-catcher.js';
import { issueMailCredentials, type MailCredentials } from '../../src/mail/mail-credentials.js';
import { seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const LIMIT_BYTES = 20_000;

describe('mail catcher', () => {
  let server: TestServer;
  let team: SeededTeam;
  let catcher: MailCatcher;
  let credentials: MailCredentials;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    catcher = new MailCatcher(server.app.db.kysely, { host: '127.0.0.1', port: 0, maxMessageBytes: LIMIT_BYTES, maxEmailsPerCopy: 3 });
    await catcher.start();
    credentials = await issueMailCredentials(server.app.db.kysely, team.copyId);
  });
  afterAll(async () => {
    await catcher.stop();
    await server.close();
  });

  const transport = (auth: MailCredentials) => nodemailer.createTransport({
    host: '127.0.0.1', port: catcher.port, secure: false, ignoreTLS: true, auth: { user: auth.username, pass: auth.password },
  });
  const emailsOfCopy = () => server.app.db.kysely.selectFrom('caught_emails').selectAll().where('copy_id', '=', team.copyId).orderBy('id').execute();

  it('keeps a message from a copy: envelope, subject, bodies, attachments and the raw message', async () => {
    await transport(credentials).sendMail({
      from: 'erp@copy.example', to: 'admin@customer.example', subject: 'Reset your password',
      text: 'Open http://127.0.0.1/web/reset?token=abc', html: '<p>Open <a href="http://127.0.0.1/web/reset?token=abc">this link</a></p>',
      attachments: [{ filename: 'invoice.pdf', content: Buffer.alloc(1234, 7) }],
    });
    const [email] = await emailsOfCopy();
    expect(email).toMatchObject({ team_id: team.teamId, sender: 'erp@copy.example', subject: 'Reset your password' });
    expect(JSON.parse(email!.recipients)).toEqual(['admin@customer.example']);
    expect(email!.text_body).toContain('token=abc');
    expect(email!.html_body).toContain('<a href=');
    expect(JSON.parse(email!.attachments)).toEqual([{ filename: 'invoice.pdf', content_type: 'application/pdf', size_bytes: 1234 }]);
    // Kept in the database (any node serves it), not as a file of this node.
    expect(email!.raw_path).toBe('');
    const raw = Buffer.from(email!.raw_message as Buffer).toString('utf8');
    expect(raw).toContain('Subject: Reset your password');
    expect(email!.size_bytes).toBe(Buffer.byteLength(raw));
    const event = await server.app.db.kysely.selectFrom('events').selectAll().where('type', '=', 'email.caught').executeTakeFirst();
    expect(JSON.parse(event!.payload).data).toMatchObject({ copy_id: team.copyId, email: { id: email!.id, subject: 'Reset your password' } });
  });

  it('refuses a wrong password with 535', async () => {
    await expect(transport({ username: credentials.username, password: 'wrong' }).sendMail({ from: 'a@b.c', to: 'd@e.f', text: 'x' }))
      .rejects.toMatchObject({ responseCode: 535 });
  });

  it('gives credentials to copies only, never to a production service', async () => {
    await expect(issueMailCredentials(server.app.db.kysely, team.serviceIds[0])).rejects.toThrow(/only copies have a mail catcher/);
  });

  it('refuses an oversized message at SMTP level, keeps nothing, and keeps serving', async () => {
    const before = (await emailsOfCopy()).length;
    await expect(transport(credentials).sendMail({ from: 'a@b.c', to: 'd@e.f', subject: 'big', text: 'x'.repeat(LIMIT_BYTES * 2) }))
      .rejects.toMatchObject({ responseCode: 552 });
    expect(await emailsOfCopy()).toHaveLength(before);
    await transport(credentials).sendMail({ from: 'a@b.c', to: 'd@e.f', subject: 'small after big', text: 'fine' });
    expect((await emailsOfCopy()).map((email) => email.subject)).toContain('small after big');
  });

  it('answers garbage with an SMTP error and keeps serving', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(catcher.port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
        if (text.includes('\r\n') && !text.includes('GARBAGE-SENT')) {
          text += 'GARBAGE-SENT';
          socket.write('\u0000\u0001 this is not smtp at all\r\nMAIL FROM:<x@y.z>\r\n');
        } else if (/GARBAGE-SENT[\s\S]*5\d\d /.test(text)) {
          socket.end();
          resolve(text);
        }
      });
      socket.on('error', reject);
      setTimeout(() => { socket.destroy(); resolve(text); }, 3000);
    });
    expect(reply).toMatch(/^220 /);
    expect(reply.split('GARBAGE-SENT')[1]).toMatch(/^5\d\d /m);
    await transport(credentials).sendMail({ from: 'a@b.c', to: 'd@e.f', subject: 'after garbage', text: 'fine' });
    expect((await emailsOfCopy()).map((email) => email.subject)).toContain('after garbage');
  });

  it('keeps at most the configured number of emails per copy, deleting the oldest, and the file of one an earlier version kept', async () => {
    // As an earlier version kept an email: its raw message in a file of the node.
    const legacyFile = join(server.dataDir, 'mail', team.copyId, 'eml_legacy.eml');
    mkdirSync(dirname(legacyFile), { recursive: true });
    writeFileSync(legacyFile, 'Subject: legacy\r\n\r\nold\r\n');
    await server.app.db.kysely.insertInto('caught_emails').values({
      id: 'eml_0legacy', team_id: team.teamId, copy_id: team.copyId, message_id: null, sender: null, recipients: '[]', subject: 'legacy',
      text_body: 'old', html_body: null, attachments: '[]', raw_path: legacyFile, size_bytes: 24, received_at: new Date().toISOString(),
    }).execute();
    expect((await emailsOfCopy()).length).toBeGreaterThan(1);
    for (let index = 0; index < 4; index += 1) {
      await transport(credentials).sendMail({ from: 'a@b.c', to: 'd@e.f', subject: `bulk ${index}`, text: 'x' });
    }
    const kept = await emailsOfCopy();
    expect(kept.map((email) => email.subject)).toEqual(['bulk 1', 'bulk 2', 'bulk 3']);
    for (const email of kept) expect(Buffer.from(email.raw_message as Buffer).toString('utf8')).toContain(`Subject: ${email.subject}`);
    expect(existsSync(legacyFile)).toBe(false);
  });
});
