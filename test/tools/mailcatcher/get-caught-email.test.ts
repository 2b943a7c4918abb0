// Reading a caught email in the activity trail, against the real server and database: an email
// may hold a password-reset link, so each read (get_caught_email) and each download of its raw
// message (download_caught_email; over MCP, the use of its link) is a row with the token, the
// email and the channel. Listing a copy's emails stays a plain read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp } from '../../mcp/clients.js';
import { trailOfToken } from '../../support/activity-trail.js';
import { addHistory, type SeededWithHistory } from '../../support/catalog-samples.js';
import { getJson, makeToken, seedTeam, startTestServer, type TestServer } from '../../support/fixtures.js';

let server: TestServer;
let team: SeededWithHistory;
let auditor: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await addHistory(server.app, await seedTeam(server.app));
  auditor = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'] })).value;
});
afterAll(async () => { await server.close(); });

const trailOf = (tokenId: string) => trailOfToken(server, auditor, tokenId);

const read = (channel: string, action: string) => expect.objectContaining({ channel, action, outcome: 'allowed' });

describe('get_caught_email', () => {
  it('is a row of the activity trail, with the token, the email and the channel, over REST and over MCP', async () => {
    const reader = await makeToken(server.app, team.teamId, { permissions: ['mailcatcher:read'] });
    expect((await getJson(server.baseUrl, `/api/service-erp/${team.copyId}/emails`, reader.value)).status).toBe(200);
    expect(await trailOf(reader.id)).toEqual([]);

    const rest = await getJson(server.baseUrl, `/api/emails/${team.emailId}`, reader.value);
    expect(rest.status).toBe(200);
    const { client, close } = await connectHttp(server.baseUrl, reader.value);
    try {
      expect((await client.callTool({ name: 'get_caught_email', arguments: { email_id: team.emailId } })).isError).toBeFalsy();
    } finally {
      await close();
    }
    const trail = await trailOf(reader.id);
    expect(trail).toEqual([read('mcp', 'get_caught_email'), read('rest', 'get_caught_email')]);
    for (const entry of trail) {
      expect(entry).toMatchObject({ token: { id: reader.id }, target: { type: 'email', id: team.emailId } });
    }
  });
});

describe('download_caught_email', () => {
  it('is a row when downloaded over REST, and over MCP when its link is used', async () => {
    const reader = await makeToken(server.app, team.teamId, { permissions: ['mailcatcher:read'] });
    const rest = await fetch(`${server.baseUrl}/api/emails/${team.emailId}/raw`, { headers: { Authorization: `Bearer ${reader.value}` } });
    expect(rest.status).toBe(200);
    expect(await rest.text()).toContain('Reset link');

    const { client, close } = await connectHttp(server.baseUrl, reader.value);
    let url: string;
    try {
      const result = await client.callTool({ name: 'download_caught_email', arguments: { email_id: team.emailId } });
      url = (result.structuredContent as { download_url: string }).download_url;
    } finally {
      await close();
    }
    expect(await trailOf(reader.id)).toEqual([read('rest', 'download_caught_email')]);
    const viaLink = await fetch(url.startsWith('http') ? url : server.baseUrl + url);
    expect(await viaLink.text()).toContain('Reset link');
    const trail = await trailOf(reader.id);
    expect(trail).toEqual([read('mcp', 'download_caught_email'), read('rest', 'download_caught_email')]);
    for (const entry of trail) {
      expect(entry).toMatchObject({ token: { id: reader.id }, target: { type: 'email', id: team.emailId } });
    }
  });
});
