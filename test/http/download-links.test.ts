// GET /downloads/{link}: what "one download" means for HEAD, Range and time, against the real
// server and database, with a link issued the way a download capability issues it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadLink, RESUME_MINUTES } from '../../src/db/repositories/download-links.js';
import { nowIso } from '../../src/db/ids.js';
import { removeMember } from '../../src/db/repositories/members.js';
import { upsertMember } from '../../src/db/repositories/teams.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const CONTENT = 'The whole file, twenty-nine b';

let server: TestServer;
let team: SeededTeam;
let tokenId: string;
let filePath: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  tokenId = (await makeToken(server.app, team.teamId)).id;
  filePath = join(server.dataDir, 'file.eml');
  writeFileSync(filePath, CONTENT);
});
afterAll(async () => { await server.close(); });

/** What a download capability records a link's use as: here, an email read over MCP. */
const READ = { action: 'download_caught_email', target: { type: 'email', id: 'eml_00000000000000000000' }, channel: 'mcp' };

async function newLink(): Promise<string> {
  const file = { path: filePath, filename: 'file.eml', contentType: 'message/rfc822', sizeBytes: CONTENT.length, sha256: null };
  return server.baseUrl + (await createDownloadLink(server.app.db.kysely, team.teamId, { tokenId }, file, READ)).path;
}

const get = async (url: string, range?: string) => {
  const response = await fetch(url, { headers: range ? { Range: range } : {} });
  return { status: response.status, text: await response.text() };
};

describe('GET /downloads/{link}', () => {
  it('answers HEAD without using the link up when a preview looks at it', async () => {
    const link = await newLink();
    for (let look = 0; look < 3; look += 1) {
      const head = await fetch(link, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(CONTENT.length));
    }
    expect(await get(link)).toEqual({ status: 200, text: CONTENT });
  });

  it('serves the rest of the file when an interrupted download resumes with Range', async () => {
    const link = await newLink();
    expect(await get(link, 'bytes=0-9')).toEqual({ status: 206, text: CONTENT.slice(0, 10) });
    expect(await get(link, 'bytes=10-')).toEqual({ status: 206, text: CONTENT.slice(10) });
  });

  it('refuses the link with 404 when the whole file has been delivered once', async () => {
    const whole = await newLink();
    expect((await get(whole)).status).toBe(200);
    expect((await get(whole)).status).toBe(404);
    expect((await get(whole, 'bytes=0-9')).status).toBe(404);
    expect((await fetch(whole, { method: 'HEAD' })).status).toBe(404);

    const pieces = await newLink();
    expect((await get(pieces, 'bytes=0-9')).status).toBe(206);
    expect((await get(pieces, 'bytes=-5')).status).toBe(206);
    expect((await get(pieces, 'bytes=0-9')).status).toBe(404);
  });

  it('gives the download RESUME_MINUTES from its first GET, then refuses it', async () => {
    const link = await newLink();
    const before = Date.now();
    expect((await get(link, 'bytes=0-4')).status).toBe(206);
    const row = await server.app.db.kysely.selectFrom('download_links').select(['used_at', 'expires_at'])
      .where('used_at', 'is not', null).orderBy('used_at', 'desc').executeTakeFirstOrThrow();
    const window = Date.parse(row.expires_at) - before;
    expect(window).toBeGreaterThanOrEqual(RESUME_MINUTES * 60_000);
    expect(window).toBeLessThan(RESUME_MINUTES * 60_000 + 10_000);

    // The window has passed.
    await server.app.db.kysely.updateTable('download_links').set({ expires_at: nowIso() }).where('used_at', '=', row.used_at).execute();
    expect((await get(link, 'bytes=5-')).status).toBe(404);
  });

  it('keeps the link usable when the range asked for is unsatisfiable', async () => {
    const link = await newLink();
    expect((await get(link, 'bytes=500-')).status).toBe(416);
    expect(await get(link)).toEqual({ status: 200, text: CONTENT });
  });
});

describe('GET /downloads/{link} in the activity trail', () => {
  const rowsOfLinks = async () => {
    await server.app.audit.flush();
    return server.app.db.kysely.selectFrom('audit_log').select(['actor_type', 'actor_id', 'channel', 'action', 'target_type', 'target_id', 'outcome'])
      .where('team_id', '=', team.teamId).where('detail', '=', 'through a download link').orderBy('id').execute();
  };

  it('records the download once, at its first GET, in the name of the token that asked for the link', async () => {
    const before = (await rowsOfLinks()).length;
    const link = await newLink();
    await fetch(link, { method: 'HEAD' });
    expect(await rowsOfLinks()).toHaveLength(before);
    expect((await get(link, 'bytes=0-9')).status).toBe(206);
    expect((await get(link, 'bytes=10-')).status).toBe(206);
    const rows = await rowsOfLinks();
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)).toEqual({
      actor_type: 'token', actor_id: tokenId, channel: 'mcp', action: 'download_caught_email',
      target_type: 'email', target_id: 'eml_00000000000000000000', outcome: 'allowed',
    });
  });
});

describe('GET /downloads/{link} and the token that asked for it', () => {
  it('refuses the link with 404 when that token has expired since', async () => {
    const expired = await makeToken(server.app, team.teamId, { expiresOn: '2000-01-01' });
    const file = { path: filePath, filename: 'file.eml', contentType: 'message/rfc822', sizeBytes: CONTENT.length, sha256: null };
    const link = server.baseUrl + (await createDownloadLink(server.app.db.kysely, team.teamId, { tokenId: expired.id }, file, READ)).path;
    expect((await get(link)).status).toBe(404);
  });
});

describe('GET /downloads/{link} and the member who asked for it in the panel', () => {
  it('serves the link while the member is in the team, and refuses it with 404 once removed', async () => {
    const db = server.app.db.kysely;
    const file = { path: filePath, filename: 'file.eml', contentType: 'message/rfc822', sizeBytes: CONTENT.length, sha256: null };
    const panelRead = { ...READ, channel: 'panel' };
    const stays = await upsertMember(db, { teamId: team.teamId, email: 'stays@example.com', role: 'member', passwordHash: null });
    const kept = server.baseUrl + (await createDownloadLink(db, team.teamId, { userId: stays }, file, panelRead)).path;
    expect(await get(kept)).toEqual({ status: 200, text: CONTENT });

    const leaves = await upsertMember(db, { teamId: team.teamId, email: 'leaves@example.com', role: 'member', passwordHash: null });
    const dropped = server.baseUrl + (await createDownloadLink(db, team.teamId, { userId: leaves }, file, panelRead)).path;
    await removeMember(db, team.teamId, leaves);
    expect((await get(dropped)).status).toBe(404);
  });
});
