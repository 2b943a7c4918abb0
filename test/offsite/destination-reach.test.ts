// No token reaches a team's off-site destination: no capability (so no REST route, MCP tool or
// OpenAPI operation, all made from the catalog) reads, sets or changes one, and once one is set
// and backups went there, its secret is in no answer, no event, no log line and no file of the
// data directory in clear.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalog } from '../../tools/index.js';
import { admin } from '../support/cli.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, send } from '../engine/support/engine-http.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from './support/object-store-server.js';

const DESTINATION_WORDS = /destination|access_key|secret_access|backup_key|endpoint|bucket/i;

describe('the capability catalog', () => {
  it('has no capability that reads, sets or changes a backup destination, in its name, path, input or output', () => {
    for (const capability of catalog) {
      const described = [capability.name, capability.http.path, JSON.stringify(z.toJSONSchema(capability.input, { io: 'input', unrepresentable: 'any' }))].join(' ');
      expect(described, capability.name).not.toMatch(DESTINATION_WORDS);
    }
  });
});

describe.runIf(objectStoreInstalled)('a team with an off-site destination, seen by a full-access token', () => {
  let store: TestObjectStore;
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  const logged: string[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'destination-reach-'));

  beforeAll(async () => {
    [store, server] = await Promise.all([
      startObjectStore(),
      startTestServer({ engine: { offsite: { intervalMs: 0 } } }, {}, { engine: true }),
    ]);
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    const secretFile = join(scratch, 'secret');
    writeFileSync(secretFile, store.secretAccessKey);
    const saved = await admin(server.dataDir, ['set-backup-destination', '--team', team.teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', secretFile, '--allow-private']);
    logged.push(JSON.stringify(saved));
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await store?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('finds no route to the destination, and no answer, event or file holds its secret in clear', async () => {
    for (const [method, path] of [['GET', '/api/backup-destination'], ['PUT', '/api/backup-destination'], ['GET', `/api/teams/${team.teamId}/backup-destination`]] as const) {
      expect((await send(server.baseUrl, method, path, token, method === 'PUT' ? { bucket: 'x' } : undefined)).status, path).toBe(404);
    }
    const done = await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.serviceIds[0]}/backups`);
    await server.app.engine.offsite.tick();
    const answers = [
      JSON.stringify(done),
      JSON.stringify((await getJson(server.baseUrl, `/api/backups/${done.backup_id}`, token)).body),
      JSON.stringify((await getJson(server.baseUrl, `/api/service-erp/${team.serviceIds[0]}/backups`, token)).body),
      JSON.stringify(await server.app.db.kysely.selectFrom('events').select('payload').execute()),
      JSON.stringify(await server.app.db.kysely.selectFrom('audit_log').selectAll().execute()),
      ...logged,
    ];
    expect(answers[1]).toContain('"kind":"offsite","state":"stored"');
    for (const answer of answers) expect(answer).not.toContain(store.secretAccessKey);
    for (const file of filesUnder(server.dataDir)) expect(readFileSync(file).includes(store.secretAccessKey), file).toBe(false);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
