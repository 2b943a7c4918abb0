// The contract between the local driver and the ERP application it runs: the files in a
// service's directory and the exit codes. The driver writes service.json, then spawns
// `node main.js <service dir>`; the application writes runtime.json once it listens. The
// outgoing-mail password is in no file in clear: service.json leaves it out and the process gets
// it in its environment (MAIL_PASSWORD_ENV), as a container does; the driver keeps it sealed.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ErpAppConfig {
  serviceId: string;
  name: string;
  revision: number;
  host: string;
  port: number;
  /** "host:port" of the SMTP server for outgoing mail; null means outgoing mail is none. */
  outgoingSmtp: string | null;
  /** Credentials for that server (a copy's mail catcher requires them); null: none. */
  outgoingSmtpAuth: MailCredentials | null;
}

export interface MailCredentials {
  username: string;
  password: string;
}

/** What a live process of the service says about itself; also what /health answers. */
export interface RuntimeRecord {
  pid: number;
  port: number | null;
  revision: number | null;
  state: 'spawned' | 'listening';
}

export const CONFIG_FILE = 'service.json';
export const RUNTIME_FILE = 'runtime.json';
export const DATABASE_FILE = 'erp.sqlite';
export const LOG_FILE = 'service.log';
/** The outgoing-mail credentials (the control plane's database keeps the password only as a hash); the password sealed by the driver. */
export const MAIL_CREDENTIALS_FILE = 'mail-credentials.json';

/** Exit codes the driver turns into readable reasons. */
export const EXIT_PORT_IN_USE = 98;
export const EXIT_BAD_CONFIG = 78;

/** Where the ERP process finds its outgoing-mail password (the container contract's name for it). */
export const MAIL_PASSWORD_ENV = 'TEAMINFRA_SMTP_PASSWORD';

export function readAppConfig(serviceDir: string, env: NodeJS.ProcessEnv = process.env): ErpAppConfig {
  const config = JSON.parse(readFileSync(join(serviceDir, CONFIG_FILE), 'utf8')) as ErpAppConfig;
  if (config.outgoingSmtpAuth) config.outgoingSmtpAuth = { ...config.outgoingSmtpAuth, password: env[MAIL_PASSWORD_ENV] ?? '' };
  return config;
}

/** service.json, without the outgoing-mail password (launch.ts passes it in the environment). */
export function writeAppConfig(serviceDir: string, config: ErpAppConfig): void {
  const auth = config.outgoingSmtpAuth && { username: config.outgoingSmtpAuth.username, password: '' };
  writeAtomically(join(serviceDir, CONFIG_FILE), JSON.stringify({ ...config, outgoingSmtpAuth: auth }, null, 2), 0o600);
}

export function readMailCredentials(serviceDir: string): MailCredentials | null {
  try {
    return JSON.parse(readFileSync(join(serviceDir, MAIL_CREDENTIALS_FILE), 'utf8')) as MailCredentials;
  } catch {
    return null;
  }
}

export function writeMailCredentials(serviceDir: string, credentials: MailCredentials | null): void {
  const file = join(serviceDir, MAIL_CREDENTIALS_FILE);
  if (credentials === null) rmSync(file, { force: true });
  else writeAtomically(file, JSON.stringify(credentials), 0o600);
}

export function readRuntime(serviceDir: string): RuntimeRecord | null {
  try {
    return JSON.parse(readFileSync(join(serviceDir, RUNTIME_FILE), 'utf8')) as RuntimeRecord;
  } catch {
    return null;
  }
}

export function writeRuntime(serviceDir: string, record: RuntimeRecord): void {
  writeAtomically(join(serviceDir, RUNTIME_FILE), JSON.stringify(record));
}

/** Removes runtime.json only if it still describes `pid` (a newer process may have replaced it). */
export function clearRuntime(serviceDir: string, pid: number): void {
  if (readRuntime(serviceDir)?.pid === pid) rmSync(join(serviceDir, RUNTIME_FILE), { force: true });
}

// A reader must never see half a file, even if the writer is killed mid-write.
function writeAtomically(file: string, text: string, mode = 0o644): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, file);
}
