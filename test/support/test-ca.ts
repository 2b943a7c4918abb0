// A certificate authority made for one test run, and a server certificate it signed for
// 127.0.0.1 and localhost: what a test needs to serve https on loopback that our own clients
// verify for real (they are told to trust this CA explicitly; verification is never switched
// off). Made with the openssl command line, since node:crypto does not issue certificates.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  caPem: string;
  serverKeyPem: string;
  serverCertPem: string;
}

/** `extraNames`: more subjectAltName entries for the server certificate (`DNS:host.docker.internal`, `IP:172.17.0.1`). */
export function makeTestCertificates(extraNames: readonly string[] = []): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'teaminfra-test-ca-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  try {
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
      '-keyout', at('ca.key'), '-out', at('ca.pem'), '-subj', '/CN=teaminfra test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
    writeFileSync(at('server.ext'), `subjectAltName=${['IP:127.0.0.1', 'DNS:localhost', ...extraNames].join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
    openssl('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial',
      '-days', '1', '-extfile', at('server.ext'), '-out', at('server.pem'));
    return { caPem: readFileSync(at('ca.pem'), 'utf8'), serverKeyPem: readFileSync(at('server.key'), 'utf8'), serverCertPem: readFileSync(at('server.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
