// A real ACME CA on loopback for the proxy's tests: Debian's Pebble, and pebble-challtestsrv as
// the DNS server Pebble asks (and TEAMINFRA_DNS_SERVER names), each run on ports of its own.
// Pebble validates HTTP-01 and TLS-ALPN-01 by connecting to the ports given here, which the
// test's proxy is published on. Its directory listens on every interface, so the proxy's
// container reaches it at host.docker.internal; its TLS certificate is a test CA's
// (TEAMINFRA_ACME_CA_ROOT). A name resolves only once the test adds it: none by default.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { makeTestCertificates } from '../../../../support/test-ca.js';

export const pebbleInstalled = ['pebble', 'pebble-challtestsrv'].every((program) =>
  (process.env.PATH ?? '/usr/bin').split(':').some((dir) => existsSync(join(dir, program))));

export interface Pebble {
  /** As the proxy's container reaches it. */
  directoryUrl: string;
  /** As this process reaches it. */
  hostDirectoryUrl: string;
  /** The port its directory listens on, every interface. */
  acmePort: number;
  /** The CA of Pebble's own TLS certificate (TEAMINFRA_ACME_CA_ROOT). */
  directoryCaPem: string;
  /** The port Pebble validates HTTP-01 on, and TLS-ALPN-01: the proxy is published there. */
  httpPort: number;
  tlsPort: number;
  /** host:port of the DNS server (TEAMINFRA_DNS_SERVER). */
  dnsServer: string;
  /** The root Pebble signs certificates under (a new one each run). */
  issuingRoot(): Promise<string>;
  pointName(name: string, address: string): Promise<void>;
  forgetName(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `extraNames`: more names for Pebble's own certificate (`IP:<the engine's bridge gateway>`, reached by this process and containers alike). */
export async function startPebble(extraNames: readonly string[] = []): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'teaminfra-pebble-'));
  const certificates = makeTestCertificates(['DNS:host.docker.internal', ...extraNames]);
  writeFileSync(join(dir, 'cert.pem'), certificates.serverCertPem);
  writeFileSync(join(dir, 'key.pem'), certificates.serverKeyPem);
  const [acmePort, managementPort, httpPort, tlsPort, dnsPort, challengeManagementPort] =
    [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'pebble.json'), JSON.stringify({
    pebble: {
      listenAddress: `0.0.0.0:${acmePort}`, managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: join(dir, 'cert.pem'), privateKey: join(dir, 'key.pem'), httpPort, tlsPort,
      ocspResponderURL: '', externalAccountBindingRequired: false,
    },
  }));
  const children: ChildProcess[] = [];
  const run = (program: string, args: string[], env: Record<string, string> = {}) => {
    const child = spawn(program, args, { stdio: 'ignore', env: { ...process.env, ...env } });
    children.push(child);
  };
  run('pebble-challtestsrv', ['-defaultIPv4', '', '-defaultIPv6', '', '-dns01', `127.0.0.1:${dnsPort}`, '-http01', '', '-https01', '',
    '-tlsalpn01', '', '-management', `127.0.0.1:${challengeManagementPort}`]);
  // No sleep before validating, and no nonce refused at random: the tests' clocks are short.
  run('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' });
  const trusting = new Agent({ connect: { ca: certificates.caPem } });
  const management = (path: string, body?: unknown) => request(`http://127.0.0.1:${challengeManagementPort}${path}`, {
    method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5_000),
  }).then((answer) => answer.body.text());
  const hostDirectoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await request(hostDirectoryUrl, { dispatcher: trusting, signal: AbortSignal.timeout(1_000) }).then((answer) => answer.body.text().then(() => answer.statusCode === 200), () => false);
    const dnsUp = await management('/clear-a', { host: 'nothing.test.' }).then(() => true, () => false);
    if (up && dnsUp) break;
    if (Date.now() > deadline) throw new Error('Pebble did not start within 20 s');
    await sleep(100);
  }
  return {
    directoryUrl: `https://host.docker.internal:${acmePort}/dir`, hostDirectoryUrl, acmePort, directoryCaPem: certificates.caPem,
    httpPort, tlsPort, dnsServer: `127.0.0.1:${dnsPort}`,
    issuingRoot: async () => {
      const answer = await request(`https://127.0.0.1:${managementPort}/roots/0`, { dispatcher: trusting, signal: AbortSignal.timeout(5_000) });
      return answer.body.text();
    },
    pointName: async (name, address) => void await management('/add-a', { host: `${name}.`, addresses: [address] }),
    forgetName: async (name) => void await management('/clear-a', { host: `${name}.` }),
    stop: async () => {
      for (const child of children) child.kill('SIGKILL');
      await trusting.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
