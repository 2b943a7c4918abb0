// A copy's password-reset email reaches the real mail catcher (the App's own, which the engine
// points copies to): the ERP process authenticates with the copy's own credentials, and the
// email is kept for mailcatcher:read, never delivered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServiceSpec } from '../../src/engine/service-spec.js';
import { issueMailCredentials } from '../../src/mail/mail-credentials.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, send } from './support/engine-http.js';

describe('a copy\'s outgoing mail', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({
      engine: { reconcileIntervalMs: 0 }, mail: { host: '127.0.0.1', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 10 },
    }, {}, { engine: true });
    await server.app.mailCatcher.start();
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
  });
  afterAll(async () => {
    await server.close();
  });

  async function startCopy(credentials: { username: string; password: string }): Promise<string> {
    const spec = await loadServiceSpec(server.app.db.kysely, team.copyId);
    await server.app.engine.driver.storeMailCredentials(spec as NonNullable<typeof spec>, credentials);
    // A restart picks up the new credentials.
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.copyId}/stop`);
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.copyId}/start`);
    return (await send(server.baseUrl, 'GET', `/api/service-erp/${team.copyId}`, token)).body.url as string;
  }

  it('is kept by the mail catcher when the copy sends a password-reset email', async () => {
    const url = await startCopy(await issueMailCredentials(server.app.db.kysely, team.copyId));
    const response = await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(response.status).toBe(200);
    const caught = await server.app.db.kysely.selectFrom('caught_emails').select(['subject', 'text_body', 'recipients'])
      .where('copy_id', '=', team.copyId).execute();
    expect(caught).toHaveLength(1);
    expect(caught[0]?.subject).toBe('Reset your password for ERP A copy');
    expect(caught[0]?.text_body).toContain(`${url}web/reset_password?token=`);
  });

  it('is refused by the mail catcher with wrong credentials, and the page says it was not sent', async () => {
    const url = await startCopy({ username: team.copyId, password: 'not the password' });
    const response = await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
    expect(response.status).toBe(502);
    expect(await response.text()).toContain('could not be sent');
  });
});
