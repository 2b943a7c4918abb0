// Entry point of the bundled ERP application in its container image (src/engine/docker/
// erp-image.ts): configuration from the environment, data in /data, port 8080, /health. The
// Docker driver publishes the port and checks /health; stopping the container sends SIGTERM.
import { join } from 'node:path';
import { DATABASE_FILE } from './config.js';
import { appConfigFromEnv } from './container-env.js';
import { openErpDatabase } from './database.js';
import { createErpServer } from './http-app.js';

export const CONTAINER_PORT = 8080;
export const CONTAINER_DATA_DIR = '/data';

function main(): void {
  let config: ReturnType<typeof appConfigFromEnv>;
  try {
    config = appConfigFromEnv(process.env, CONTAINER_PORT);
  } catch (error) {
    console.error(`cannot read the service configuration: ${(error as Error).message}`);
    process.exit(78);
  }
  const db = openErpDatabase(join(process.env.TEAMINFRA_DATA_DIR ?? CONTAINER_DATA_DIR, DATABASE_FILE));
  const server = createErpServer(config, db, config.publicUrl);
  server.listen(config.port, config.host, () => {
    console.log(`${new Date().toISOString()} ${config.name} (revision ${config.revision}) listening on port ${config.port}, reached at ${config.publicUrl}/`);
  });
  const stop = (signal: string) => {
    console.log(`${new Date().toISOString()} ${signal}: stopping`);
    server.close(() => {
      db.close();
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 1000).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main();
