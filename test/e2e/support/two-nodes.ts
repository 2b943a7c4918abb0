// Two `teaminfra serve` nodes ("A" and "B"), real processes on free ports, each with its own
// data directory (its ERP services' files), sharing one PostgreSQL schema made for the suite,
// and, as every node of one database must, one secrets key (docs/secrets.md).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { openDatabase, type Db } from '../../../src/db/connect.js';
import { killProcessesMatching } from '../../engine/support/engine-http.js';
import { admin, startServe, type ServeProcess } from '../../support/cli.js';
import { createTestSchema, type TestSchema } from '../../support/database.js';
import { tempDataDir } from '../../support/fixtures.js';

export type NodeName = 'A' | 'B';

export interface TwoNodes {
  schema: TestSchema;
  /** A connection of the test's own to the shared database, for setup and checks. */
  db: Db;
  dataDirs: Record<NodeName, string>;
  serves: Partial<Record<NodeName, ServeProcess>>;
  /** Starts (or restarts) a node; leases last `leaseMs`, so a killed node is given up quickly. `env` adds to its environment. */
  start(node: NodeName, env?: NodeJS.ProcessEnv): Promise<ServeProcess>;
  url(node: NodeName): string;
  /** `teaminfra admin ...` against the shared database. */
  admin(args: string[]): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export const LEASE_MS = 2000;

export async function twoNodes(label: string): Promise<TwoNodes> {
  const schema = await createTestSchema(label);
  const dataDirs: Record<NodeName, string> = { A: tempDataDir(), B: tempDataDir() };
  const db = openDatabase(tempDataDir(), { url: schema.url, poolSize: 2 });
  await db.ready();
  const serves: TwoNodes['serves'] = {};
  const database = ['--database-url', schema.url];
  const secretsKey = { TEAMINFRA_SECRETS_KEY: randomBytes(32).toString('base64') };
  return {
    schema, db, dataDirs, serves,
    async start(node, env = {}) {
      const serve = await startServe(dataDirs[node], [...database, '--node', node], {
        TEAMINFRA_DB_POOL: '4', TEAMINFRA_LEASE_MS: String(LEASE_MS), ...secretsKey, ...env,
      });
      serves[node] = serve;
      return serve;
    },
    url(node) {
      const serve = serves[node];
      if (!serve) throw new Error(`node ${node} is not running`);
      return serve.baseUrl;
    },
    admin: (args) => admin(dataDirs.A, [...args, ...database], undefined, secretsKey),
    async close() {
      for (const serve of Object.values(serves)) await serve?.stop('SIGTERM');
      // ERP services are detached from serve on purpose; the suite leaves none behind.
      for (const dataDir of Object.values(dataDirs)) {
        await killProcessesMatching(dataDir);
        rmSync(dataDir, { recursive: true, force: true });
      }
      rmSync(db.dataDir, { recursive: true, force: true });
      await db.close();
      await schema.drop();
    },
  };
}
