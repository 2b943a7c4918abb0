// What a server's proxy holds that must not be lost with it, kept with the server and sealed
// with the secrets key: its ACME account's key (made once; the account survives a new proxy
// volume), and the certificate and key an operator gave the server instead of ACME's (admin
// set-server-certificate). Both are opened only to go into the proxy's configuration.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { newAccountKeyPem } from '../docker/proxy/acme-account.js';

const accountContext = (serverId: string) => `acme-account-key:${serverId}`;
const tlsKeyContext = (serverId: string) => `tls-key:${serverId}`;

export class CertificateFileError extends Error {}

/** The server's ACME account key (PEM), made and kept now if it has none. */
export async function acmeAccountKey(db: Kysely<Database>, secrets: SecretBox, serverId: string): Promise<string> {
  const row = await db.selectFrom('docker_servers').select('acme_account_key').where('server_id', '=', serverId).executeTakeFirstOrThrow();
  if (row.acme_account_key) return secrets.reveal(row.acme_account_key, accountContext(serverId));
  const made = newAccountKeyPem();
  // Two nodes at once: the first key written wins, and both use it.
  await db.updateTable('docker_servers').set({ acme_account_key: secrets.seal(made, accountContext(serverId)) })
    .where('server_id', '=', serverId).where('acme_account_key', 'is', null).execute();
  return acmeAccountKey(db, secrets, serverId);
}

export interface ServerCertificate {
  certificatePem: string;
  keyPem: string;
  /** Its names (subjectAltName DNS entries), ASCII. */
  hostnames: string[];
  expiresAt: string;
}

/** Checks that the key belongs to the certificate and reads its names; a CertificateFileError says what is wrong. */
export function readServerCertificate(certificatePem: string, keyPem: string): ServerCertificate {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certificatePem);
  } catch {
    throw new CertificateFileError('the certificate file is not a PEM certificate.');
  }
  try {
    if (!certificate.checkPrivateKey(createPrivateKey(keyPem))) throw new CertificateFileError('the key does not belong to the certificate.');
  } catch (error) {
    if (error instanceof CertificateFileError) throw error;
    throw new CertificateFileError('the key file is not a PEM private key (an encrypted key must be decrypted first).');
  }
  const hostnames = (certificate.subjectAltName ?? '').split(', ').filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  if (hostnames.length === 0) throw new CertificateFileError('the certificate names no DNS name (subjectAltName).');
  return { certificatePem, keyPem, hostnames, expiresAt: new Date(certificate.validTo).toISOString() };
}

export async function setServerCertificate(db: Kysely<Database>, secrets: SecretBox, serverId: string, certificate: ServerCertificate | null): Promise<void> {
  await db.updateTable('docker_servers').set({
    tls_certificate: certificate?.certificatePem ?? null, tls_key: certificate ? secrets.seal(certificate.keyPem, tlsKeyContext(serverId)) : null,
  }).where('server_id', '=', serverId).execute();
}

export async function serverCertificate(db: Kysely<Database>, secrets: SecretBox, serverId: string): Promise<ServerCertificate | null> {
  const row = await db.selectFrom('docker_servers').select(['tls_certificate', 'tls_key']).where('server_id', '=', serverId).executeTakeFirst();
  if (!row?.tls_certificate || !row.tls_key) return null;
  return readServerCertificate(row.tls_certificate, secrets.reveal(row.tls_key, tlsKeyContext(serverId)));
}

/** Seals with the current key every proxy secret in clear or sealed with a previous key (seal-stored-secrets.ts). */
export async function resealProxySecrets(db: Kysely<Database>, box: SecretBox): Promise<number> {
  const rows = await db.selectFrom('docker_servers').select(['server_id', 'acme_account_key', 'tls_key'])
    .where((eb) => eb.or([eb('acme_account_key', 'is not', null), eb('tls_key', 'is not', null)])).execute();
  let resealed = 0;
  for (const row of rows) {
    for (const [column, context] of [['acme_account_key', accountContext(row.server_id)], ['tls_key', tlsKeyContext(row.server_id)]] as const) {
      const value = row[column];
      const sealed = value === null ? undefined : box.resealed(value, context);
      if (value === null || sealed === undefined) continue;
      await db.updateTable('docker_servers').set({ [column]: sealed }).where('server_id', '=', row.server_id).where(column, '=', value).execute();
      resealed++;
    }
  }
  return resealed;
}
