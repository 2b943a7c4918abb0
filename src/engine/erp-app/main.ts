// Entry point of one ERP service process: `node main.js <service dir>`. Spawned detached by
// the local driver, so it outlives the control plane; it records itself in runtime.json (which,
// with /health, is how a restarted control plane finds and adopts it) and ends on SIGTERM.
import { join } from 'node:path';
import { clearRuntime, DATABASE_FILE, EXIT_BAD_CONFIG, EXIT_PORT_IN_USE, readAppConfig, writeRuntime, type ErpAppConfig } from './config.js';
import { openErpDatabase } from './database.js';
import { createErpServer } from './http-app.js';

const serviceDir = process.argv[2];
let config: ErpAppConfig;
try {
  if (!serviceDir) throw new Error('usage: main.js <service dir>');
  config = readAppConfig(serviceDir);
} catch (error) {
  console.error(`cannot read the service configuration: ${(error as Error).message}`);
  process.exit(EXIT_BAD_CONFIG);
}

let db: ReturnType<typeof openErpDatabase>;
try {
  db = openErpDatabase(join(serviceDir, DATABASE_FILE));
} catch (error) {
  // One line: the driver quotes the last line of the log as the reason the start failed.
  console.error(`cannot open the database: ${(error as Error).message}`);
  process.exit(1);
}
const server = createErpServer(config, db);

server.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE') {
    console.error(`port ${config.host}:${config.port} is already in use by another program`);
    process.exit(EXIT_PORT_IN_USE);
  }
  console.error(`cannot listen on ${config.host}:${config.port}: ${error.message}`);
  process.exit(1);
});

server.listen(config.port, config.host, () => {
  writeRuntime(serviceDir, { pid: process.pid, port: config.port, revision: config.revision, state: 'listening' });
  console.log(`${new Date().toISOString()} ${config.name} (revision ${config.revision}) listening on http://${config.host}:${config.port}/`);
});

let stopping = false;
function stop(signal: string): void {
  if (stopping) return;
  stopping = true;
  console.log(`${new Date().toISOString()} ${signal}: stopping`);
  server.close(() => {
    db.close();
    clearRuntime(serviceDir as string, process.pid);
    process.exit(0);
  });
  // Idle keep-alive connections would hold close() open; nobody is mid-request on them.
  server.closeIdleConnections();
  setTimeout(() => server.closeAllConnections(), 1000).unref();
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
