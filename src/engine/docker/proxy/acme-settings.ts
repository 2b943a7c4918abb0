// The installation's ACME settings: TEAMINFRA_ACME_DIRECTORY (default Let's Encrypt's),
// TEAMINFRA_ACME_EMAIL (the contact the CA writes to; default none) and TEAMINFRA_ACME_CA_ROOT
// (a PEM file the proxy, and teaminfra registering its account, trust for the directory: a test
// CA's; default the system's roots). Read once per use, so a changed setting applies at the
// next configuration pushed.
import { readFileSync } from 'node:fs';

export const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

export class AcmeSettingError extends Error {}

export interface InstallationAcme {
  directoryUrl: string;
  email: string | null;
  caRootPem: string | null;
}

export function acmeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): InstallationAcme {
  const directoryUrl = env.TEAMINFRA_ACME_DIRECTORY || LETS_ENCRYPT_DIRECTORY;
  if (!/^https:\/\/[^\s/]+/.test(directoryUrl)) throw new AcmeSettingError(`TEAMINFRA_ACME_DIRECTORY must be an https:// URL; got "${directoryUrl}".`);
  const email = env.TEAMINFRA_ACME_EMAIL || null;
  if (email !== null && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new AcmeSettingError(`TEAMINFRA_ACME_EMAIL must be an email address; got "${email}".`);
  let caRootPem: string | null = null;
  if (env.TEAMINFRA_ACME_CA_ROOT) {
    try {
      caRootPem = readFileSync(env.TEAMINFRA_ACME_CA_ROOT, 'utf8');
    } catch (error) {
      throw new AcmeSettingError(`TEAMINFRA_ACME_CA_ROOT names ${env.TEAMINFRA_ACME_CA_ROOT}, which cannot be read (${(error as NodeJS.ErrnoException).code}).`);
    }
    if (!caRootPem.includes('-----BEGIN CERTIFICATE-----')) throw new AcmeSettingError(`TEAMINFRA_ACME_CA_ROOT (${env.TEAMINFRA_ACME_CA_ROOT}) holds no PEM certificate.`);
  }
  return { directoryUrl, email, caRootPem };
}
