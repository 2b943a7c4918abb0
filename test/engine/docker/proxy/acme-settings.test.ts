// The installation's ACME settings, as a newcomer gets them (nothing set: Let's Encrypt) and as
// an operator sets them, each mistake a sentence.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acmeSettingsFromEnv, LETS_ENCRYPT_DIRECTORY } from '../../../../src/engine/docker/proxy/acme-settings.js';
import { makeTestCertificates } from '../../../support/test-ca.js';

describe('acmeSettingsFromEnv', () => {
  it('asks Let\'s Encrypt with no contact and the system\'s roots by default', () => {
    expect(acmeSettingsFromEnv({})).toEqual({ directoryUrl: LETS_ENCRYPT_DIRECTORY, email: null, caRootPem: null });
  });

  it('reads the directory, the contact and the CA root the operator gives', () => {
    const dir = mkdtempSync(join(tmpdir(), 'teaminfra-acme-'));
    try {
      const root = join(dir, 'root.pem');
      writeFileSync(root, makeTestCertificates().caPem);
      const settings = acmeSettingsFromEnv({ TEAMINFRA_ACME_DIRECTORY: 'https://127.0.0.1:14000/dir', TEAMINFRA_ACME_EMAIL: 'ops@example.org', TEAMINFRA_ACME_CA_ROOT: root });
      expect(settings).toMatchObject({ directoryUrl: 'https://127.0.0.1:14000/dir', email: 'ops@example.org' });
      expect(settings.caRootPem).toContain('BEGIN CERTIFICATE');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a directory that is not https, a contact that is not an address, and a CA root it cannot read', () => {
    expect(() => acmeSettingsFromEnv({ TEAMINFRA_ACME_DIRECTORY: 'http://acme.example/dir' })).toThrow('must be an https:// URL');
    expect(() => acmeSettingsFromEnv({ TEAMINFRA_ACME_EMAIL: 'ops' })).toThrow('must be an email address');
    expect(() => acmeSettingsFromEnv({ TEAMINFRA_ACME_CA_ROOT: '/nonexistent/root.pem' })).toThrow('cannot be read (ENOENT)');
  });
});
