// `npm start` (`serve --demo`) on an empty data directory shows the whole mail-catcher path: its
// staging copy is made as through the API (with its own mail-catcher login), runs, and has sent
// one password-reset email, which the printed token reads through the API. A real process.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/cli.js';
import { getJson, tempDataDir } from '../support/fixtures.js';
import { fetchText, killProcessesMatching } from '../engine/support/engine-http.js';

describe('serve --demo', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop();
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a token that reads a password-reset email caught from the demo\'s running staging copy', async () => {
    serve = await startServe(dataDir, ['--demo']);
    const output = serve.output();
    const token = /API token:\s+(tinf_\S+)/.exec(output)?.[1] as string;
    const copyId = /staging copy:\s+(svc_\S+)/.exec(output)?.[1] as string;
    expect(token, output).toBeDefined();
    expect(copyId, output).toBeDefined();
    expect(output).toContain(`curl -H "Authorization: Bearer ${token}" ${serve.baseUrl}/api/service-erp/${copyId}/emails`);

    const copy = await getJson(serve.baseUrl, `/api/service-erp/${copyId}`, token);
    expect(copy.body).toMatchObject({ name: 'Production ERP (staging copy)', is_copy: true, state: 'running' });
    const emails = await getJson(serve.baseUrl, `/api/service-erp/${copyId}/emails`, token);
    expect(emails.status).toBe(200);
    expect(emails.body.data).toHaveLength(1);
    expect(emails.body.data[0]).toMatchObject({ subject: 'Reset your password for Production ERP (staging copy)', recipients: ['admin@example.com'] });
    const email = await getJson(serve.baseUrl, `/api/emails/${emails.body.data[0].id}`, token);
    const link = /http:\/\/\S+\/web\/reset_password\?token=\S+/.exec(email.body.text_body)?.[0] as string;
    expect(link.startsWith(`${copy.body.url}web/reset_password?token=`)).toBe(true);
    expect((await fetchText(link)).text).toContain('name="password"');

    // Its mail-catcher login keeps working: a reset asked for now is caught too.
    const again = await fetch(`${copy.body.url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(again.status).toBe(200);
    expect((await getJson(serve.baseUrl, `/api/service-erp/${copyId}/emails`, token)).body.data).toHaveLength(2);
  }, 60_000);
});
