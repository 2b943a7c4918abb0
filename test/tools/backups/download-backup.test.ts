// download_backup in the activity trail, against the real server and database: a backup is a
// whole database, so each download is a row (who, which backup, which channel), as an action's
// is, and not only the token's "last used". Over REST the download itself; over MCP the use of
// the link the tool hands out, not its issue. Reading a backup's details stays a plain read.
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

describe('download_backup', () => {
  it('is a row of the activity trail, with the token, the backup and the channel, when downloaded over REST', async () => {
    const downloader = await makeToken(server.app, team.teamId, { permissions: ['backups:download', 'backups:read'] });
    const details = await getJson(server.baseUrl, `/api/backups/${team.backupId}`, downloader.value);
    expect(details.status).toBe(200);
    expect(await trailOf(downloader.id)).toEqual([]);

    const download = await fetch(`${server.baseUrl}/api/backups/${team.backupId}/download`, { headers: { Authorization: `Bearer ${downloader.value}` } });
    expect(download.status).toBe(200);
    await download.arrayBuffer();
    expect(await trailOf(downloader.id)).toEqual([expect.objectContaining({
      token: expect.objectContaining({ id: downloader.id }), channel: 'rest', action: 'download_backup',
      target: { type: 'backup', id: team.backupId }, outcome: 'allowed',
    })]);
  });

  it('over MCP, is a row when the link it hands out is used, not when it is issued', async () => {
    const assistant = await makeToken(server.app, team.teamId, { permissions: ['backups:download'] });
    const { client, close } = await connectHttp(server.baseUrl, assistant.value);
    let url: string;
    try {
      const result = await client.callTool({ name: 'download_backup', arguments: { backup_id: team.backupId } });
      expect(result.isError).toBeFalsy();
      url = (result.structuredContent as { download_url: string }).download_url;
    } finally {
      await close();
    }
    expect(await trailOf(assistant.id)).toEqual([]);

    const download = await fetch(url.startsWith('http') ? url : server.baseUrl + url);
    expect(download.status).toBe(200);
    await download.arrayBuffer();
    expect(await trailOf(assistant.id)).toEqual([expect.objectContaining({
      token: expect.objectContaining({ id: assistant.id }), channel: 'mcp', action: 'download_backup',
      target: { type: 'backup', id: team.backupId }, outcome: 'allowed',
    })]);
  });
});
