// Marks written into a running Docker service's data and read back, for each kind of service a
// team runs: the bundled ERP image (a product, written into its database while it is stopped)
// and Tryton (a party, through its JSON-RPC). A restore of a backup taken between two marks has
// the first and not the second. Each kind also says how it answers at its url.
import SQLite from 'better-sqlite3';
import { expect } from 'vitest';
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { fetchText } from '../../support/engine-http.js';
import { editServiceDatabase, readServiceDatabase } from './service-volume.js';
import { createParty, partyNames, trytonSession } from './tryton-app.js';

/** A service as the marks need it: its url, and the admin's password for an app that has logins. */
export interface MarkedService { id: string; serverId: string; url: string; password?: string }

export interface ServiceKind {
  /** The service's app (`app` of POST /api/service-erp); none for the server's image. */
  app?: string;
  /** Writes `mark` into the running service's data; `restart` stops and starts it (through the API) where the data is written from outside. */
  mark(service: MarkedService, mark: string, restart: (run: () => Promise<void>) => Promise<void>): Promise<void>;
  /** The marks in the running service's data, sorted. */
  marksOf(service: MarkedService): Promise<string[]>;
  /** Fails unless the service answers at its url as its app does. */
  expectAnswers(service: MarkedService): Promise<void>;
}

const SKU_PREFIX = 'MARK ';
const PARTY_PREFIX = 'Mark: ';

/** The bundled ERP image; `image` (that image) runs the helper containers that reach its volume. */
export function erpImageKind(api: DockerApi, image: string): ServiceKind {
  const where = (service: MarkedService) => ({ api, image, serverId: service.serverId });
  return {
    async mark(service, mark, restart) {
      await restart(async () => {
        await editServiceDatabase(where(service), service.id, (sqlite) => {
          sqlite.prepare('INSERT INTO products (sku, name, price_cents, stock) VALUES (?, ?, 0, 0)').run(SKU_PREFIX + mark, mark);
        });
      });
    },
    async marksOf(service) {
      const database = await readServiceDatabase(where(service), service.id);
      try {
        const sqlite = new SQLite(database.file, { readonly: true, fileMustExist: true });
        try {
          return (sqlite.prepare('SELECT name FROM products WHERE sku LIKE ? ORDER BY name').all(`${SKU_PREFIX}%`) as { name: string }[]).map((row) => row.name);
        } finally {
          sqlite.close();
        }
      } finally {
        database.done();
      }
    },
    async expectAnswers(service) {
      const home = await fetchText(service.url);
      expect(home.status, home.text).toBe(200);
      expect(home.text).toMatch(/data-revision="\d+"/);
    },
  };
}

export function trytonKind(): ServiceKind {
  const session = (service: MarkedService) => trytonSession(service.url, 'admin', service.password as string);
  return {
    app: 'tryton',
    async mark(service, mark) {
      await createParty(service.url, await session(service), PARTY_PREFIX + mark);
    },
    async marksOf(service) {
      const names = await partyNames(service.url, await session(service));
      return names.filter((name) => name.startsWith(PARTY_PREFIX)).map((name) => name.slice(PARTY_PREFIX.length)).sort();
    },
    async expectAnswers(service) {
      // A login answers only once the web container reaches its database.
      expect(await session(service)).toMatch(/\w+/);
    },
  };
}
