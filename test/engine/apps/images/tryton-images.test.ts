// The tryton app's images, built offline (`build-app-images`), run on a real Docker engine the
// way its definition says, by hand through the engine API: PostgreSQL 15 and Tryton 6.0 on a
// network of their own, the database made by the definition's migrate command, then the proof
// that it is a working ERP: the image's health route, JSON-RPC, the admin's login with the
// generated password, a party written and read back, and the definition's snapshot (pg_dump
// from a one-off container that reaches the database over the network), verify and neutralize.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledApp } from '../../../../src/engine/apps/bundled-apps.js';
import { buildAppImages } from '../../../../src/engine/apps/images/build-app-images.js';
import type { BuiltImage } from '../../../../src/engine/apps/images/build-debian-image.js';
import { dockerAvailable, testDockerApi } from '../../docker/support/docker-engine.js';
import { smtpUri } from '../../../../src/engine/apps/smtp-uri.js';
import { HandRun } from './support/run-by-hand.js';

const tryton = bundledApp('tryton')!;

/** One JSON-RPC call; `session` is the `Authorization: Session` value after a login. */
async function rpc(base: string, path: string, method: string, params: unknown[], session?: string) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST', signal: AbortSignal.timeout(30_000),
    headers: { 'content-type': 'application/json', ...(session ? { authorization: `Session ${session}` } : {}) },
    body: JSON.stringify({ id: 1, method, params }),
  });
  const text = await response.text();
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) as { result?: unknown; error?: unknown } : text };
}

describe.runIf(dockerAvailable)('the tryton app on a real Docker engine', () => {
  const api = testDockerApi();
  const runId = randomBytes(5).toString('hex');
  // Generated per service by the driver later; here per run, with characters a shell would mangle.
  const secrets = { DB_PASSWORD: randomBytes(18).toString('base64url'), ADMIN_PASSWORD: `adm'in ${randomBytes(9).toString('hex')}` };
  // Stands for a copy's mail catcher: a login of its own, with characters a URI must encode.
  const smtpLogin = { user: `copy+${runId}@catcher`, password: `p@ss:w+rd/${randomBytes(6).toString('hex')}` };
  const caught: ParsedMail[] = [];
  const smtp = new SMTPServer({
    allowInsecureAuth: true, disabledCommands: ['STARTTLS'], logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === smtpLogin.user && auth.password === smtpLogin.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then((mail) => { caught.push(mail); callback(); }, callback);
    },
  });
  let run: HandRun;
  let images: BuiltImage[];
  let base: string;
  let migrateOutput: string;
  let healthBeforeMigrate: { status: number; body: string };

  /** Asks /health until `done` says so, within the definition's start deadline. */
  async function waitForHealth(container: string, done: (status: number | null) => boolean) {
    const until = Date.now() + tryton.deadlines.startMs;
    for (;;) {
      const answer = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
      if (done(answer?.status ?? null)) return { status: answer!.status, body: await answer!.text() };
      if (Date.now() > until) throw new Error(`Tryton's /health did not answer as expected within ${tryton.deadlines.startMs} ms: ${await run.logs(container)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  beforeAll(async () => {
    // A first build on this machine takes minutes (debootstrap, apt); the cached one a second.
    images = await buildAppImages(api, tryton, () => undefined);
    await new Promise<void>((resolve) => smtp.listen(0, '0.0.0.0', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    run = new HandRun(api, tryton, runId, {
      ...secrets, TEAMINFRA_SMTP_URI: smtpUri({ host: 'host.docker.internal', port, ...smtpLogin }),
    });
    await run.createNetwork();
    const database = await run.start('database');
    await run.waitHealthy(database, 60_000);
    // The web container first: until the database is made, its health route must say no.
    const web = await run.start('tryton');
    base = `http://127.0.0.1:${await run.publishedPort(web)}`;
    healthBeforeMigrate = await waitForHealth(web, (status) => status !== null);
    const migrated = await run.runCommand(tryton.commands.migrate!, { timeoutMs: tryton.deadlines.migrateMs });
    migrateOutput = migrated.output;
    expect(migrated.exitCode, migrated.output).toBe(0);
    await waitForHealth(web, (status) => status === 200);
  }, 20 * 60_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await run?.removeEverything();
    await api.close();
  }, 120_000);

  it('builds both images under the names the definition uses, and finds them again without building', async () => {
    expect(images.map((image) => image.image)).toEqual(['teaminfra-tryton-postgres:15', 'teaminfra-tryton:6.0']);
    const again = await buildAppImages(api, tryton, () => undefined);
    expect(again.map(({ built, contentImage }) => ({ built, contentImage }))).toEqual(images.map(({ contentImage }) => ({ built: false, contentImage })));
    const labels = (await api.json<{ Config: { Labels: Record<string, string>; User: string } }>('GET', '/images/teaminfra-tryton:6.0/json')).Config;
    expect(labels.User).toBe('tryton');
    expect(labels.Labels['io.teaminfra.health-path']).toBe('/health');
  });

  it('answers the image\'s health route only once the database is made, and serves the web client at /', async () => {
    // The database exists (the PostgreSQL image made it) but has no tables yet.
    expect(healthBeforeMigrate).toEqual({ status: 503, body: 'not ready: UndefinedTable\n' });
    const health = await fetch(`${base}/health`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('tryton');
  });

  it('answers common.server.version over JSON-RPC with Tryton 6.0', async () => {
    const { status, body } = await rpc(base, '/', 'common.server.version', []);
    expect(status).toBe(200);
    expect((body as { result: string }).result).toMatch(/^6\.0\.\d+$/);
  });

  it('logs the admin in with the generated password, refuses another, and a party written through the session reads back', async () => {
    expect((await rpc(base, '/tryton/', 'common.db.login', ['admin', { password: 'not-the-password' }, 'en'])).status).toBe(401);
    const login = await rpc(base, '/tryton/', 'common.db.login', ['admin', { password: secrets.ADMIN_PASSWORD }, 'en']);
    expect(login.status).toBe(200);
    const [userId, key] = (login.body as { result: [number, string] }).result;
    const session = Buffer.from(`admin:${userId}:${key}`).toString('base64');
    const created = await rpc(base, '/tryton/', 'model.party.party.create', [[{ name: 'Acme Hosting' }], {}], session);
    const [partyId] = (created.body as { result: number[] }).result;
    const read = await rpc(base, '/tryton/', 'model.party.party.read', [[partyId], ['name'], {}], session);
    expect((read.body as { result: { name: string }[] }).result[0]!.name).toBe('Acme Hosting');
    expect(migrateOutput).not.toContain(secrets.ADMIN_PASSWORD);
  });

  it('sends a password reset asked by the admin to the SMTP relay it is given, logged in with the relay\'s own credentials', async () => {
    const login = await rpc(base, '/tryton/', 'common.db.login', ['admin', { password: secrets.ADMIN_PASSWORD }, 'en']);
    const [userId, key] = (login.body as { result: [number, string] }).result;
    const session = Buffer.from(`admin:${userId}:${key}`).toString('base64');
    const created = await rpc(base, '/tryton/', 'model.res.user.create', [[{ name: 'Ada', login: 'ada', email: 'ada@example.com' }], {}], session);
    const [adaId] = (created.body as { result: number[] }).result;
    const reset = await rpc(base, '/tryton/', 'model.res.user.reset_password', [[adaId], {}], session);
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    const until = Date.now() + 30_000;
    while (caught.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(caught).toHaveLength(1);
    expect(caught[0]!.to).toMatchObject({ text: 'ada@example.com' });
    // Tryton 6.0 sends the reset as HTML only.
    const words = String(caught[0]!.html).replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    expect(words).toContain('The password for your account, ada, has been reset.');
  });

  it('runs the snapshot, verify (refusing a damaged dump) and neutralize (scheduled jobs off) commands from one-off containers on the service\'s network', async () => {
    const backup = { volume: run.volumeName('backup'), target: '/backup' };
    await api.json('POST', '/volumes/create', { body: { Name: backup.volume, Labels: { 'io.teaminfra.test-run': runId } } });
    const snapshot = await run.runCommand(tryton.commands.snapshot!, { timeoutMs: 120_000, workingDir: '/backup', extraMounts: [backup] });
    expect(snapshot.exitCode, snapshot.output).toBe(0);
    const verify = await run.runCommand(tryton.commands.verify!, { timeoutMs: 60_000, workingDir: '/backup', extraMounts: [backup] });
    expect(verify.exitCode, verify.output).toBe(0);
    // A damaged archive is refused by the same verify command.
    const damage = await run.runCommand({ service: 'database', user: null, command: ['truncate', '--size=100', 'tryton.dump'] },
      { timeoutMs: 60_000, workingDir: '/backup', extraMounts: [backup] });
    expect(damage.exitCode, damage.output).toBe(0);
    const refused = await run.runCommand(tryton.commands.verify!, { timeoutMs: 60_000, workingDir: '/backup', extraMounts: [backup] });
    expect(refused.exitCode).not.toBe(0);

    const activeJobs = () => run.runCommand({ service: 'database', user: null, command: ['psql', '--tuples-only', '--no-align', '--command=SELECT count(*) FROM ir_cron WHERE active'] }, { timeoutMs: 60_000 });
    expect(Number((await activeJobs()).output.trim())).toBeGreaterThan(0);
    const neutralize = await run.runCommand(tryton.commands.neutralize!, { timeoutMs: 60_000 });
    expect(neutralize.exitCode, neutralize.output).toBe(0);
    expect((await activeJobs()).output.trim()).toBe('0');
  });
});
