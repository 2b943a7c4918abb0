// The capability catalog: the explicit list. Nothing else registers a capability; the REST
// routes, the MCP tools and the OpenAPI document are all generated from this array.
import type { Capability } from '../src/core/capability.js';
import listErpServices from './services/list-erp-services.js';
import getErpService from './services/get-erp-service.js';
import listCopies from './services/list-copies.js';
import listServers from './servers/list-servers.js';
import getServer from './servers/get-server.js';
import listBackups from './backups/list-backups.js';
import getBackup from './backups/get-backup.js';
import listOperations from './operations/list-operations.js';
import getOperation from './operations/get-operation.js';
import getCurrentToken from './token/get-current-token.js';

export const catalog: readonly Capability[] = Object.freeze([
  listErpServices,
  getErpService,
  listCopies,
  listServers,
  getServer,
  listBackups,
  getBackup,
  listOperations,
  getOperation,
  getCurrentToken,
] as unknown as Capability[]);
