// The running application's shared parts: database, audit trail, configuration. Built once by
// `teaminfra serve` (or a test) and handed to every adapter.
import { AuditLog } from './core/audit.js';
import type { CoreDeps } from './core/invoke.js';
import { openDatabase, type Db } from './db/connect.js';
import { createEngine, type Engine, type EngineConfig } from './engine/engine.js';
import { rateLimitFromEnv, type RateLimitConfig } from './http/rate-limit.js';

export interface AppConfig {
  dataDir: string;
  rateLimit: RateLimitConfig;
  /** Largest JSON request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Engine tuning (lease, poll, concurrency, timeouts); defaults in src/engine/engine.ts. */
  engine?: Partial<EngineConfig>;
}

export interface App extends CoreDeps {
  db: Db;
  config: AppConfig;
  /** Runs ERP services. Not started by createApp: `serve` (or a test that wants it) calls start(). */
  engine: Engine;
  close(): Promise<void>;
}

export function defaultConfig(dataDir: string): AppConfig {
  return { dataDir, rateLimit: rateLimitFromEnv(), bodyLimitBytes: 64 * 1024 };
}

export function createApp(config: AppConfig, onInternalError?: CoreDeps['onInternalError']): App {
  const db = openDatabase(config.dataDir);
  const audit = new AuditLog(db.kysely, { onError: (error) => console.error('audit flush failed', error) });
  const engine = createEngine(db, config.engine);
  return {
    db,
    audit,
    config,
    onInternalError,
    engine,
    async close() {
      // Detaches running services (src/engine/README.md): they keep running and are adopted next start.
      await engine.close();
      await audit.close();
      await db.close();
    },
  };
}
