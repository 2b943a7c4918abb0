// The app registry on the current project's engine (SQLite, and PostgreSQL when configured):
// an operator's definition is stored, read back as the same model, listed after the bundled
// ones, and a bundled or taken name is refused.
import { afterEach, describe, expect, it } from 'vitest';
import { addApp, findApp, listApps } from '../../src/engine/apps/app-registry.js';
import { AppDefinitionError } from '../../src/engine/apps/parse-app-definition.js';
import { openTestDatabase, testEngine, type TestDatabase } from '../support/database.js';

const engine = testEngine();

const SHOP = `
name: shop
services:
  web: { image: "shop:1", ports: ["8000"], volumes: ["data:/srv"] }
volumes: { data: {} }
x-teaminfra: { web: web }
`;

describe(`app definitions (${engine})`, () => {
  const opened: TestDatabase[] = [];
  afterEach(async () => {
    for (const database of opened.splice(0)) await database.close();
  });
  async function open() {
    const database = await openTestDatabase(engine, 'apps');
    opened.push(database);
    return database.db.kysely;
  }

  it('stores an added definition and reads it back as the same model', async () => {
    const db = await open();
    const added = await addApp(db, SHOP, { replace: false });
    expect(await findApp(db, 'shop')).toEqual(added.app);
    expect(await findApp(db, 'nothing')).toBeNull();
    expect((await findApp(db, 'tryton'))!.containers.map((each) => each.image)).toEqual(['teaminfra-tryton-postgres:15', 'teaminfra-tryton:6.0']);
  });

  it('lists the bundled apps first, then the added ones, without adding the bundled ones', async () => {
    const db = await open();
    await addApp(db, SHOP, { name: 'shop-eu', replace: false });
    const apps = await listApps(db);
    expect(apps.map(({ name, origin }) => [name, origin])).toEqual([['demo', 'bundled'], ['tryton', 'bundled'], ['shop-eu', 'added']]);
    expect(apps[1]).toMatchObject({ web: { service: 'tryton', port: 8000 }, database: 'database', added_at: null });
    expect(apps[2]!.added_at).toMatch(/^\d{4}-/);
    expect(await db.selectFrom('app_definitions').select('name').execute()).toEqual([{ name: 'shop-eu' }]);
  });

  it('refuses a bundled name, and a taken one unless replace is asked', async () => {
    const db = await open();
    await expect(addApp(db, SHOP, { name: 'tryton', replace: false })).rejects.toThrow('"tryton" is the name of a bundled app');
    await addApp(db, SHOP, { replace: false });
    const changed = SHOP.replace('shop:1', 'shop:2');
    const refusal = await addApp(db, changed, { replace: false }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppDefinitionError);
    expect((refusal as AppDefinitionError).problems).toEqual(['An app named "shop" already exists; pass --replace to change it, or give another name (--name).']);
    expect((await findApp(db, 'shop'))!.containers[0]!.image).toBe('shop:1');
    await addApp(db, changed, { replace: true });
    expect((await findApp(db, 'shop'))!.containers[0]!.image).toBe('shop:2');
  });
});
