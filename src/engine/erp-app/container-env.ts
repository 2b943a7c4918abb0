// The image contract's environment (src/engine/README.md, "The image contract"): what the
// Docker driver tells every container it creates. An image reads what it needs of it; the
// bundled ERP application reads all of it (container-main.ts).
import type { ErpAppConfig } from './config.js';

export const CONTAINER_ENV = {
  serviceId: 'TEAMINFRA_SERVICE_ID',
  serviceName: 'TEAMINFRA_SERVICE_NAME',
  revision: 'TEAMINFRA_REVISION',
  /** Where people reach the service (the engine host's published port), for links in emails. */
  publicUrl: 'TEAMINFRA_PUBLIC_URL',
  /** Outgoing mail: host and port of the SMTP relay, empty when the service sends none. */
  smtpHost: 'TEAMINFRA_SMTP_HOST',
  smtpPort: 'TEAMINFRA_SMTP_PORT',
  smtpUser: 'TEAMINFRA_SMTP_USER',
  smtpPassword: 'TEAMINFRA_SMTP_PASSWORD',
} as const;

/** The bundled application's configuration from the contract's environment; throws naming what is missing. */
export function appConfigFromEnv(env: NodeJS.ProcessEnv, port: number): ErpAppConfig & { publicUrl: string } {
  const read = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const smtpHost = env[CONTAINER_ENV.smtpHost];
  const smtpUser = env[CONTAINER_ENV.smtpUser];
  return {
    serviceId: read(CONTAINER_ENV.serviceId), name: read(CONTAINER_ENV.serviceName), revision: Number(read(CONTAINER_ENV.revision)),
    host: '0.0.0.0', port, publicUrl: read(CONTAINER_ENV.publicUrl).replace(/\/+$/, ''),
    outgoingSmtp: smtpHost ? `${smtpHost}:${env[CONTAINER_ENV.smtpPort] ?? '25'}` : null,
    outgoingSmtpAuth: smtpUser ? { username: smtpUser, password: env[CONTAINER_ENV.smtpPassword] ?? '' } : null,
  };
}
