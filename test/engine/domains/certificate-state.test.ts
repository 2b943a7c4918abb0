// A name's certificate state moved on by what the proxy reports, and the events a team gets:
// one per change of state, never one per retry, and a quiet renewal.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../src/db/connect.js';
import { nowIso } from '../../../src/db/ids.js';
import { listEvents } from '../../../src/db/repositories/events.js';
import { setNotificationMail } from '../../../src/db/repositories/incidents.js';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { insertTeam, upsertMember } from '../../../src/db/repositories/teams.js';
import { certificateChanges, recordCertificateChanges, serverDomainRows, type DomainCertificateRow } from '../../../src/engine/domains/certificate-state.js';
import { tempDataDir } from '../../support/fixtures.js';

const NOW = Date.parse('2026-12-01T00:00:00Z');
const explain = async (domain: string, error: string) => `${domain}: ${error}`;
const row = (values: Partial<DomainCertificateRow> = {}): DomainCertificateRow => ({
  domain: 'shop.example.org', service_id: 'svc_1', team_id: 'team_1', certificate_state: 'pending',
  certificate_expires_at: null, certificate_reason: null, ...values,
});

describe('certificateChanges', () => {
  it('issues a pending name once the proxy holds its certificate, and records a renewal quietly', async () => {
    const stored = new Map([['shop.example.org', { expiresAt: '2027-03-01T00:00:00.000Z' }]]);
    expect(await certificateChanges([row()], { stored, verdicts: [] }, NOW, explain)).toMatchObject([
      { state: 'issued', expiresAt: '2027-03-01T00:00:00.000Z', reason: null, event: 'certificate.issued' },
    ]);
    const issued = row({ certificate_state: 'issued', certificate_expires_at: '2027-01-01T00:00:00.000Z' });
    expect(await certificateChanges([issued], { stored, verdicts: [] }, NOW, explain)).toMatchObject([{ state: 'issued', event: null }]);
    expect(await certificateChanges([row({ certificate_state: 'issued', certificate_expires_at: '2027-03-01T00:00:00.000Z' })], { stored, verdicts: [] }, NOW, explain)).toEqual([]);
  });

  it('fails a name the CA refused, once, with the reason explained, and issues it after', async () => {
    const verdicts = [{ name: 'shop.example.org', ok: false, error: 'no such host' }];
    const [failed] = await certificateChanges([row()], { stored: new Map(), verdicts }, NOW, explain);
    expect(failed).toMatchObject({ state: 'failed', reason: 'shop.example.org: no such host', event: 'certificate.failed' });
    const again = row({ certificate_state: 'failed', certificate_reason: 'shop.example.org: no such host' });
    expect(await certificateChanges([again], { stored: new Map(), verdicts }, NOW, explain)).toEqual([]);
    const stored = new Map([['shop.example.org', { expiresAt: '2027-03-01T00:00:00.000Z' }]]);
    expect(await certificateChanges([again], { stored, verdicts: [] }, NOW, explain)).toMatchObject([{ state: 'issued', event: 'certificate.issued' }]);
  });

  it('warns once when a certificate is 14 days from its end and its renewal has not succeeded', async () => {
    const expiresAt = new Date(NOW + 10 * 24 * 3600 * 1000).toISOString();
    const stored = new Map([['shop.example.org', { expiresAt }]]);
    const issued = row({ certificate_state: 'issued', certificate_expires_at: expiresAt });
    const [expiring] = await certificateChanges([issued], { stored, verdicts: [{ name: 'shop.example.org', ok: false, error: 'timeout' }] }, NOW, explain);
    expect(expiring).toMatchObject({ state: 'issued', event: 'certificate.expiring' });
    expect(expiring!.reason).toBe(`Its renewal has not succeeded yet; it expires at ${expiresAt}. shop.example.org: timeout`);
    expect(await certificateChanges([{ ...issued, certificate_reason: expiring!.reason }], { stored, verdicts: [] }, NOW, explain)).toEqual([]);
  });
});

describe('recordCertificateChanges', () => {
  let dataDir: string;
  let db: SqliteDb;
  beforeAll(() => {
    dataDir = tempDataDir();
    db = openDatabase(dataDir);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes the state and its event together, for the service\'s team', async () => {
    const teamId = await insertTeam(db.kysely, { name: 'Cert team', plan: 'starter', timezone: 'UTC' });
    const serverId = await insertServer(db.kysely, { teamId, name: 'docker' });
    const serviceId = await insertService(db.kysely, { teamId, serverId, name: 'Shop' });
    await db.kysely.insertInto('service_domains').values({ domain: 'shop.example.org', service_id: serviceId, kind: 'custom', certificate_state: 'pending', created_at: nowIso(), updated_at: nowIso() }).execute();
    const rows = await serverDomainRows(db.kysely, serverId);
    const changes = await certificateChanges(rows, { stored: new Map(), verdicts: [{ name: 'shop.example.org', ok: false, error: 'refused' }] }, NOW, explain);
    await recordCertificateChanges(db.kysely, changes);
    expect(await serverDomainRows(db.kysely, serverId)).toMatchObject([{ certificate_state: 'failed', certificate_reason: 'shop.example.org: refused' }]);
    const events = await listEvents(db.kysely, teamId);
    expect(events.map((event) => [event.type, JSON.parse(event.payload).data])).toEqual([['certificate.failed', {
      service_id: serviceId, domain: 'shop.example.org', certificate: { state: 'failed', expires_at: null, reason: 'shop.example.org: refused' },
    }]]);
  });

  it('emails the owners once when names of a service get no certificate, and once more when every name has one', async () => {
    const teamId = await insertTeam(db.kysely, { name: 'Mailed team', plan: 'starter', timezone: 'UTC' });
    await upsertMember(db.kysely, { teamId, email: 'owner@example.com', role: 'owner', passwordHash: 'x' });
    await upsertMember(db.kysely, { teamId, email: 'member@example.com', role: 'member', passwordHash: 'x' });
    await setNotificationMail(db.kysely, { host: '127.0.0.1', port: 2525, from: 'alerts@teaminfra.test' }, nowIso());
    const serverId = await insertServer(db.kysely, { teamId, name: 'docker' });
    const serviceId = await insertService(db.kysely, { teamId, serverId, name: 'Books' });
    for (const domain of ['books.example.org', 'www.books.example.org']) {
      await db.kysely.insertInto('service_domains').values({ domain, service_id: serviceId, kind: 'custom', certificate_state: 'pending', created_at: nowIso(), updated_at: nowIso() }).execute();
    }
    const emails = () => db.kysely.selectFrom('notification_emails').select(['phase', 'recipient', 'what']).where('team_id', '=', teamId).orderBy('created_at').orderBy('phase', 'desc').execute();
    const report = async (stored: string[], failing: string[]) => recordCertificateChanges(db.kysely, await certificateChanges(
      await serverDomainRows(db.kysely, serverId),
      { stored: new Map(stored.map((domain) => [domain, { expiresAt: '2027-03-01T00:00:00.000Z' }])), verdicts: failing.map((name) => ({ name, ok: false, error: 'no such host' })) },
      NOW, explain,
    ));
    await report([], ['books.example.org', 'www.books.example.org']);
    expect(await emails()).toEqual([{ phase: 'start', recipient: 'owner@example.com', what: 'The certificate for books.example.org (ERP service "Books") could not be obtained: books.example.org: no such host' }]);
    // One name issued, the other still failed: the incident goes on.
    await report(['books.example.org'], ['www.books.example.org']);
    expect(await emails()).toHaveLength(1);
    await report(['books.example.org', 'www.books.example.org'], []);
    expect((await emails()).map((email) => [email.phase, email.what])).toEqual([
      ['start', 'The certificate for books.example.org (ERP service "Books") could not be obtained: books.example.org: no such host'],
      ['end', 'Every name of ERP service "Books" has its certificate again.'],
    ]);
  });
});
