// The capability catalog: the explicit list. Nothing else registers a capability; the REST
// routes, the MCP tools and the OpenAPI document are all generated from this array.
import type { Capability } from '../src/core/capability.js';
import listErpServices from './services/list-erp-services.js';
import getErpService from './services/get-erp-service.js';
import getErpServiceLogs from './services/get-erp-service-logs.js';
import getErpServiceMetrics from './services/get-erp-service-metrics.js';
import listCopies from './services/list-copies.js';
import listServers from './servers/list-servers.js';
import getServer from './servers/get-server.js';
import listBackups from './backups/list-backups.js';
import getBackup from './backups/get-backup.js';
import listOperations from './operations/list-operations.js';
import getOperation from './operations/get-operation.js';
import getCurrentToken from './token/get-current-token.js';
import startErpService from './services/start-erp-service.js';
import stopErpService from './services/stop-erp-service.js';
import redeployErpService from './services/redeploy-erp-service.js';
import createErpService from './services/create-erp-service.js';
import deleteErpService from './services/delete-erp-service.js';
import createServer from './servers/create-server.js';
import listCaughtEmails from './mailcatcher/list-caught-emails.js';
import getCaughtEmail from './mailcatcher/get-caught-email.js';
import downloadCaughtEmail from './mailcatcher/download-caught-email.js';
import createCopy from './services/create-copy.js';
import getOutgoingMail from './services/get-outgoing-mail.js';
import setOutgoingMail from './services/set-outgoing-mail.js';
import addServiceDomain from './services/add-service-domain.js';
import removeServiceDomain from './services/remove-service-domain.js';
import createBackup from './backups/create-backup.js';
import downloadBackup from './backups/download-backup.js';
import restoreBackup from './backups/restore-backup.js';
import recoverErpService from './services/recover-erp-service.js';
import moveErpService from './services/move-erp-service.js';
import rollbackErpServiceMove from './services/rollback-erp-service-move.js';
import getBackupSchedule from './backups/get-backup-schedule.js';
import setBackupSchedule from './backups/set-backup-schedule.js';
import requestDecision from './decisions/request-decision.js';
import listDecisions from './decisions/list-decisions.js';
import getDecision from './decisions/get-decision.js';
import answerDecision from './decisions/answer-decision.js';
import cancelDecision from './decisions/cancel-decision.js';
import listActivity from './activity/list-activity.js';

export const catalog: readonly Capability[] = Object.freeze([
  listErpServices,
  getErpService,
  getErpServiceLogs,
  getErpServiceMetrics,
  listCopies,
  listServers,
  getServer,
  listBackups,
  getBackup,
  listOperations,
  getOperation,
  getCurrentToken,
  startErpService,
  stopErpService,
  redeployErpService,
  createErpService,
  deleteErpService,
  createServer,
  listCaughtEmails,
  getCaughtEmail,
  downloadCaughtEmail,
  createCopy,
  getOutgoingMail,
  setOutgoingMail,
  addServiceDomain,
  removeServiceDomain,
  createBackup,
  downloadBackup,
  restoreBackup,
  recoverErpService,
  moveErpService,
  rollbackErpServiceMove,
  getBackupSchedule,
  setBackupSchedule,
  requestDecision,
  listDecisions,
  getDecision,
  answerDecision,
  cancelDecision,
  listActivity,
] as unknown as Capability[]);
