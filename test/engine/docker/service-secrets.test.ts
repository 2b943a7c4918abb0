// The secrets an app definition declares, per service: generated once (a create resumed after a
// crash keeps the first ones), URL-safe, sealed bound to their service and name, resealed on a
// key change, gone with the service; and the initial credentials, which open for their service only.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/connect.js';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertService } from '../../../src/db/repositories/services.js';
import { insertTeam } from '../../../src/db/repositories/teams.js';
import { openInitialCredentials, sealInitialCredentials } from '../../../src/engine/apps/initial-credentials.js';
import {
  deleteServiceSecrets, ensureServiceSecrets, readServiceSecrets, resealServiceSecrets,
} from '../../../src/engine/docker/service-secrets.js';
import { SecretBox } from '../../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../../src/secrets/secrets-key.js';
import { tempDataDir } from '../../support/fixtures.js';

const keyText = () => randomBytes(32).toString('base64');
const boxOf = (current: string, previous = '') =>
  new SecretBox(loadSecretsKeys('/nonexistent', { TEAMINFRA_SECRETS_KEY: current, TEAMINFRA_SECRETS_KEY_PREVIOUS: previous }));

describe('service secrets', () => {
  const db = openDatabase(tempDataDir());
  afterAll(() => db.close());

  async function newService() {
    const teamId = await insertTeam(db.kysely, { name: 'T', plan: 'starter', timezone: 'UTC' });
    const serverId = await insertServer(db.kysely, { teamId, name: 's' });
    return insertService(db.kysely, { teamId, serverId, name: 'Tryton', app: 'tryton' });
  }

  it('are generated once, URL-safe and sealed, and a second call (a resumed create) keeps them', async () => {
    const box = boxOf(keyText());
    const serviceId = await newService();
    const first = await ensureServiceSecrets(db.kysely, box, serviceId, ['DB_PASSWORD', 'ADMIN_PASSWORD']);
    expect(Object.keys(first).sort()).toEqual(['ADMIN_PASSWORD', 'DB_PASSWORD']);
    for (const value of Object.values(first)) expect(value).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(first.DB_PASSWORD).not.toBe(first.ADMIN_PASSWORD);
    expect(await ensureServiceSecrets(db.kysely, box, serviceId, ['DB_PASSWORD', 'ADMIN_PASSWORD'])).toEqual(first);
    const rows = await db.kysely.selectFrom('service_secrets').select('sealed').where('service_id', '=', serviceId).execute();
    for (const row of rows) {
      expect(row.sealed).toMatch(/^tsec1:/);
      for (const value of Object.values(first)) expect(row.sealed).not.toContain(value);
    }
  });

  it('do not open as another service\'s, are resealed with a new key, and go with deleteServiceSecrets', async () => {
    const oldKey = keyText();
    const serviceId = await newService();
    const other = await newService();
    const values = await ensureServiceSecrets(db.kysely, boxOf(oldKey), serviceId, ['DB_PASSWORD']);
    // A sealed value moved to another service's row does not open there.
    const { sealed } = await db.kysely.selectFrom('service_secrets').select('sealed').where('service_id', '=', serviceId).executeTakeFirstOrThrow();
    await db.kysely.insertInto('service_secrets').values({ service_id: other, name: 'DB_PASSWORD', sealed, created_at: 'x' }).execute();
    await expect(readServiceSecrets(db.kysely, boxOf(oldKey), other)).rejects.toThrow();
    await deleteServiceSecrets(db.kysely, other);

    // Only this test's rows: the first test's were sealed with a key of its own, which a real database never mixes in.
    await db.kysely.deleteFrom('service_secrets').where('service_id', '!=', serviceId).execute();
    const box = boxOf(keyText(), oldKey);
    expect(await resealServiceSecrets(db.kysely, box)).toBe(1);
    expect(await readServiceSecrets(db.kysely, box, serviceId)).toEqual(values);
    expect(await resealServiceSecrets(db.kysely, box)).toBe(0);
    await deleteServiceSecrets(db.kysely, serviceId);
    expect(await readServiceSecrets(db.kysely, box, serviceId)).toEqual({});
  });

  it('initial credentials open for their own service only', () => {
    const box = boxOf(keyText());
    const sealed = sealInitialCredentials(box, 'svc_a', { login: 'admin', password: 'pw-123456' });
    expect(JSON.stringify(sealed)).not.toContain('pw-123456');
    expect(openInitialCredentials({ initial_credentials: sealed }, 'svc_a', box)).toEqual({ login: 'admin', password: 'pw-123456' });
    expect(openInitialCredentials({ initial_credentials: sealed }, 'svc_b', box)).toBeNull();
    expect(openInitialCredentials({}, 'svc_a', box)).toBeNull();
  });
});
