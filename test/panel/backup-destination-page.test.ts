// Developer > Backups over plain HTTP against the real server and a real S3-compatible store
// (Ceph's radosgw): an owner sets the team's off-site destination, checked against the store on
// save (a sentence when it fails), and sees the team's backup key once with the command that
// opens an object; the secret is never shown again; a loopback endpoint is refused unless the
// operator set TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE=1; members are refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from '../offsite/support/object-store-server.js';

const PASSWORD = 'backups-page-password';
const PATH = '/panel/developer/backups';

describe.runIf(objectStoreInstalled)('the Backups page', () => {
  let store: TestObjectStore;
  let server: TestServer;
  let teamId: string;
  const pages: string[] = [];

  const signedIn = async (email: string) => {
    const visitor = new Visitor(server.baseUrl);
    expect((await visitor.signIn(email, PASSWORD)).status).toBe(303);
    return visitor;
  };
  const save = async (visitor: Visitor, change: Record<string, string> = {}) => {
    const page = await visitor.request('GET', PATH);
    const answer = await visitor.request('POST', PATH, {
      _csrf: visitor.csrfFrom(page.text), endpoint: store.endpoint, region: store.region, bucket: store.bucket, prefix: 'panel/',
      access_key_id: store.accessKeyId, secret_access_key: store.secretAccessKey, ...change,
    });
    pages.push(page.text, answer.text);
    return answer;
  };

  beforeAll(async () => {
    [store, server] = await Promise.all([startObjectStore(), startTestServer()]);
    teamId = await insertTeam(server.app.db.kysely, { name: 'Keepers', plan: 'business', timezone: 'UTC' });
    await seedMembers(server.app, teamId, PASSWORD, ['owner', 'admin', 'member']);
  }, 600_000);
  afterEach(() => {
    delete process.env.TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE;
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });

  it('refuses a loopback endpoint with the operator\'s default settings, saying why', async () => {
    const owner = await signedIn('owner@example.com');
    expect((await owner.request('GET', PATH)).text).toContain('No off-site destination yet');
    const refused = await save(owner);
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('The endpoint must use https.');
  });

  it('says in a sentence what failed when the store refuses the destination, and saves nothing', async () => {
    process.env.TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE = '1';
    const owner = await signedIn('owner@example.com');
    const refused = await save(owner, { bucket: 'missing-bucket' });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain(`the bucket &quot;missing-bucket&quot; does not exist at ${store.endpoint}. The destination was not saved.`);
    expect((await owner.request('GET', PATH)).text).toContain('No off-site destination yet');
  });

  it('saves a destination the store accepts and shows the team\'s backup key once, with the command that opens an object', async () => {
    process.env.TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE = '1';
    const owner = await signedIn('owner@example.com');
    const saved = await save(owner);
    expect(saved.status).toBe(201);
    expect(saved.text).toMatch(/value="AGE-SECRET-KEY-1[0-9A-Z]+"/);
    expect(saved.text).toContain('age -d -i key.txt OBJECT &gt; backup.tar.zst');
    const page = await owner.request('GET', PATH);
    expect(page.text).toContain(`<dd>${store.bucket}</dd>`);
    expect(page.text).toContain(`<dd>${store.accessKeyId}</dd>`);
    expect(page.text).not.toContain('AGE-SECRET-KEY');
    // An admin replaces it: checked again, and no new key.
    const admin = await signedIn('admin@example.com');
    const replaced = await save(admin, { prefix: 'panel/again/' });
    expect(replaced.status).toBe(303);
    expect((await admin.request('GET', PATH)).text).toContain('<dd>panel/again/</dd>');
    // The secret is on no page, ever.
    for (const text of [...pages, page.text]) expect(text).not.toContain(store.secretAccessKey);
  });

  it('refuses members', async () => {
    const member = await signedIn('member@example.com');
    expect((await member.request('GET', PATH)).status).toBe(403);
    expect((await member.request('POST', PATH, { _csrf: 'x', endpoint: store.endpoint })).status).toBe(403);
  });
});
