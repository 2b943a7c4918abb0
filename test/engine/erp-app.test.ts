// The ERP application a local service runs, started through the local driver as a real child
// process: its home page, its health answer, and the password-reset flow over real SMTP.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceSpec } from '../../src/engine/driver.js';
import { DATABASE_FILE } from '../../src/engine/erp-app/config.js';
import { LocalDriver } from '../../src/engine/local/local-driver.js';
import { tempDataDir } from '../support/fixtures.js';
import { fetchText, killProcessesMatching } from './support/engine-http.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';

const noHooks = { portAssigned: async () => undefined, spawned: async () => undefined };

/** A service whose relay (the test's SMTP sink, on loopback) the operator allowed, as set-outgoing-mail --allow-private does. */
function spec(id: string, outgoingSmtp: string | null): ServiceSpec {
  return {
    id, name: `ERP ${id}`, revision: 3, port: null, pid: null, outgoingSmtp, outgoingSmtpAllowPrivate: true, parentId: null,
    server: { id: 'srv_erpapptest000000000', rootDir: null, docker: null },
  };
}

async function postForm(url: string, fields: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: response.status, text: await response.text() };
}

describe('ERP application', () => {
  const dataDir = tempDataDir();
  const driver = new LocalDriver({ dataDir, takenPorts: async () => new Set() });
  let sink: SmtpSink;
  let copyUrl: string;
  let productionUrl: string;
  const copy = (port: number) => spec('svc_erpappcopy000000000', `127.0.0.1:${port}`);
  const production = spec('svc_erpappprod000000000', null);

  beforeAll(async () => {
    sink = await startSmtpSink();
    copyUrl = `http://127.0.0.1:${(await driver.start(copy(sink.port), noHooks)).port}`;
    productionUrl = `http://127.0.0.1:${(await driver.start(production, noHooks)).port}`;
  });
  afterAll(async () => {
    await driver.stop({ ...copy(sink.port), port: Number(new URL(copyUrl).port) });
    await driver.stop({ ...production, port: Number(new URL(productionUrl).port) });
    await sink.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the service name, the deployed revision and seeded business data on its home page', async () => {
    const home = await fetchText(`${copyUrl}/`);
    expect(home.status).toBe(200);
    expect(home.text).toContain('<h1>ERP svc_erpappcopy000000000</h1>');
    expect(home.text).toContain('data-revision="3"');
    expect(home.text).toContain('Customers: 5');
  });

  it('answers /health with its service id, revision and pid', async () => {
    const health = JSON.parse((await fetchText(`${copyUrl}/health`)).text);
    expect(health).toMatchObject({ status: 'ok', service_id: 'svc_erpappcopy000000000', revision: 3 });
    expect(health.pid).toBeGreaterThan(0);
  });

  it('mails a reset link for login admin to the configured SMTP server, and the link sets a new password once', async () => {
    const requested = await postForm(`${copyUrl}/web/reset_password`, { login: 'admin' });
    expect(requested.status).toBe(200);
    expect(sink.messages).toHaveLength(1);
    const mail = sink.messages[0];
    expect(mail?.to).toEqual(['admin@example.com']);
    expect(mail?.data).toMatch(/^Subject: Reset your password for ERP svc_erpappcopy000000000$/m);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/web\/reset_password\?token=[\w-]+)/.exec(mail?.data ?? '')?.[1] as string;
    expect(link.startsWith(copyUrl)).toBe(true);

    const form = await fetchText(link);
    expect(form.status).toBe(200);
    expect(form.text).toContain('Choose a new password');
    const token = new URL(link).searchParams.get('token') as string;
    expect((await postForm(`${copyUrl}/web/set_password`, { token, password: 'a new password' })).status).toBe(200);
    expect((await postForm(`${copyUrl}/web/set_password`, { token, password: 'another one!' })).status).toBe(400);
  });

  it('answers an unknown login exactly like a known one, and sends nothing', async () => {
    const before = sink.messages.length;
    const requested = await postForm(`${copyUrl}/web/reset_password`, { login: 'nobody' });
    expect(requested.status).toBe(200);
    expect(requested.text).toContain('If that login exists');
    expect(sink.messages).toHaveLength(before);
  });

  it('sends no email when outgoing mail is none, says so, and records the attempt as not sent', async () => {
    const before = sink.messages.length;
    const refused = await postForm(`${productionUrl}/web/reset_password`, { login: 'admin' });
    expect(refused.status).toBe(503);
    expect(refused.text).toContain('outgoing mail: none');
    expect(sink.messages).toHaveLength(before);
    const db = new SQLite(join(driver.serviceDir(production), DATABASE_FILE), { readonly: true });
    try {
      expect(db.prepare('SELECT recipient, state FROM outgoing_mail').all()).toEqual([{ recipient: 'admin@example.com', state: 'not_sent' }]);
    } finally {
      db.close();
    }
  });
});
