// A Docker server's logins to image registries, on SQLite and (when configured) PostgreSQL: one
// per server and registry, replaced when set again, the password sealed and opened only for its
// own server and registry, removed on demand, and sealed anew at a key change.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { insertServer } from '../../../src/db/repositories/servers.js';
import { insertTeam } from '../../../src/db/repositories/teams.js';
import {
  findRegistryCredentials, removeRegistryCredentials, resealRegistryPasswords, setRegistryCredentials,
} from '../../../src/engine/docker/registry-credentials.js';
import { isSealed, SecretBox } from '../../../src/secrets/secret-box.js';
import { loadSecretsKeys } from '../../../src/secrets/secrets-key.js';
import { openTestDatabase, TEST_DATABASE_URL, type TestEngine } from '../../support/database.js';

const keyText = () => randomBytes(32).toString('base64');
const boxOf = (current: string, previous = '') =>
  new SecretBox(loadSecretsKeys('/nonexistent', { TEAMINFRA_SECRETS_KEY: current, TEAMINFRA_SECRETS_KEY_PREVIOUS: previous }));

const engines: TestEngine[] = TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(engines)('registry credentials on %s', (engine) => {
  it('keeps one login per server and registry, sealed, replaced when set again, opened only there, and removed', async () => {
    const test = await openTestDatabase(engine, 'registry-credentials');
    try {
      const db = test.db.kysely;
      const teamId = await insertTeam(db, { name: 'Registries', plan: 'business', timezone: 'UTC' });
      const [one, two] = [await insertServer(db, { teamId, name: 'one' }), await insertServer(db, { teamId, name: 'two' })];
      const box = boxOf(keyText());
      await setRegistryCredentials(db, box, one, 'registry.example.com:5000', { username: 'ci', password: 'first secret' });
      await setRegistryCredentials(db, box, one, 'registry.example.com:5000', { username: 'bot', password: 'second secret' });
      await setRegistryCredentials(db, box, two, 'docker.io', { username: 'hub', password: 'hub secret' });
      const rows = await db.selectFrom('registry_credentials').selectAll().orderBy('server_id').execute();
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(isSealed(row.password)).toBe(true);
      expect(await findRegistryCredentials(db, box, one, 'registry.example.com:5000')).toEqual({ username: 'bot', password: 'second secret' });
      expect(await findRegistryCredentials(db, box, one, 'docker.io')).toBeNull();
      expect(await findRegistryCredentials(db, box, two, 'registry.example.com:5000')).toBeNull();
      expect(await removeRegistryCredentials(db, one, 'registry.example.com:5000')).toBe(true);
      expect(await removeRegistryCredentials(db, one, 'registry.example.com:5000')).toBe(false);
      expect(await findRegistryCredentials(db, box, two, 'docker.io')).toEqual({ username: 'hub', password: 'hub secret' });
    } finally {
      await test.close();
    }
  });

  it('seals the passwords anew with the current key at a key change', async () => {
    const test = await openTestDatabase(engine, 'registry-reseal');
    try {
      const db = test.db.kysely;
      const teamId = await insertTeam(db, { name: 'Keys', plan: 'business', timezone: 'UTC' });
      const serverId = await insertServer(db, { teamId, name: 'one' });
      const [oldKey, newKey] = [keyText(), keyText()];
      await setRegistryCredentials(db, boxOf(oldKey), serverId, 'registry.example.com', { username: 'ci', password: 'kept secret' });
      expect(await resealRegistryPasswords(db, boxOf(newKey, oldKey))).toBe(1);
      expect(await resealRegistryPasswords(db, boxOf(newKey, oldKey))).toBe(0);
      expect(await findRegistryCredentials(db, boxOf(newKey), serverId, 'registry.example.com')).toEqual({ username: 'ci', password: 'kept secret' });
    } finally {
      await test.close();
    }
  });
});
