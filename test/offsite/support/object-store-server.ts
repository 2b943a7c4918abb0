// A real S3-compatible store for the off-site suites: Debian's Ceph RADOS Gateway (radosgw), on a
// one-monitor, one-OSD cluster whose OSD keeps its objects in memory (memstore), all in a folder
// of its own on free loopback ports. Chosen because it checks every request's SigV4 signature
// as S3 does (a wrong secret is SignatureDoesNotMatch, an unsigned request AccessDenied), and
// speaks S3's multipart upload: a fake store that accepts any signature (s3rver) would let a
// signing bug through. Its gateway can be killed and started again on the same port while the
// cluster keeps the objects, which is how the suites take the store away mid-upload.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freeLoopbackPort } from '../../engine/docker/support/test-registry.js';

const run = promisify(execFile);

export const RADOSGW = '/usr/bin/radosgw';
/** Where the off-site suites run: Debian's radosgw, ceph-mon and ceph-osd (.ci/run installs them; TEAMINFRA_REQUIRE_OBJECT_STORE=1 makes their absence fail). */
export const objectStoreInstalled = (existsSync(RADOSGW) && existsSync('/usr/bin/ceph-mon') && existsSync('/usr/bin/ceph-osd'))
  || process.env.TEAMINFRA_REQUIRE_OBJECT_STORE === '1';

export interface TestObjectStore {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A bucket made at start. */
  bucket: string;
  /** An S3 client signed in as the store's user, for the suites' own looks. */
  client: S3Client;
  makeBucket(name: string): Promise<void>;
  /** Kills the gateway (the cluster keeps the objects): the store is gone for its clients. */
  killGateway(): Promise<void>;
  /** Starts the gateway again on the same port; resolves once it answers. */
  startGateway(): Promise<void>;
  close(): Promise<void>;
}

export async function startObjectStore(): Promise<TestObjectStore> {
  const dir = mkdtempSync(join(tmpdir(), 'teaminfra-radosgw-'));
  const [monPort, gatewayPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const fsid = randomUUID();
  for (const sub of ['mon', 'osd', 'run', 'log', 'rgw']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'ceph.conf');
  writeFileSync(conf, [
    '[global]', `fsid = ${fsid}`, `mon host = v1:127.0.0.1:${monPort}`,
    'auth cluster required = none', 'auth service required = none', 'auth client required = none',
    `run dir = ${join(dir, 'run')}`, `log file = ${join(dir, 'log')}/$name.log`, `admin socket = ${join(dir, 'run')}/$name.asok`,
    'osd pool default size = 1', 'osd pool default min size = 1', 'mon allow pool size one = true', 'mon warn on pool no redundancy = false',
    'osd pool default pg num = 8', 'osd pool default pgp num = 8', 'osd crush chooseleaf type = 0',
    // The OSD is placed by hand below: at its start it would ask the monitor to place it, and may
    // ask before it knows the cluster's fsid (a race of Ceph 16 without cephx), and then exit.
    'osd crush update on start = false', 'osd class update on start = false',
    'osd objectstore = memstore', `memstore device bytes = ${3 * 1024 * 1024 * 1024}`,
    `mon data = ${join(dir, 'mon')}`, `osd data = ${join(dir, 'osd')}`, `rgw data = ${join(dir, 'rgw')}`, 'ms bind ipv6 = false', '',
  ].join('\n'));
  const env = { ...process.env, CEPH_CONF: conf };
  const daemons: ChildProcess[] = [];
  const daemon = (program: string, args: string[]) => {
    const child = spawn(program, ['-f', ...args], { env, stdio: 'ignore' });
    daemons.push(child);
    return child;
  };
  const ceph = async (program: string, args: string[]) => (await run(program, args, { env, timeout: 60_000 })).stdout;
  let gateway: ChildProcess | undefined;
  const accessKeyId = `AK${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const endpoint = `http://127.0.0.1:${gatewayPort}`;
  const startGateway = async () => {
    gateway = daemon(RADOSGW, ['-n', 'client.rgw', '--rgw-frontends', `beast endpoint=127.0.0.1:${gatewayPort}`]);
    await until(async () => (await fetch(endpoint, { signal: AbortSignal.timeout(2_000) })).status === 200, 180_000, 'radosgw to answer');
  };
  const close = async () => {
    for (const child of daemons) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await ceph('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v1:127.0.0.1:${monPort}]`, join(dir, 'monmap')]);
    await ceph('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap'), '--keyring', '/dev/null']);
    writeFileSync(join(dir, 'mon', 'keyring'), '');
    daemon('/usr/bin/ceph-mon', ['-i', 'a']);
    const osdUuid = randomUUID();
    await until(async () => (await ceph('ceph', ['--connect-timeout', '5', 'osd', 'create', osdUuid])).trim() === '0', 180_000, 'the monitor to make the OSD');
    await ceph('ceph-osd', ['-i', '0', '--mkfs', '--osd-uuid', osdUuid]);
    await ceph('ceph', ['osd', 'crush', 'add', 'osd.0', '1', 'root=default', 'host=localhost']);
    let osd = daemon('/usr/bin/ceph-osd', ['-i', '0']);
    await until(async () => {
      // One that exited at its start (see above) is started again.
      if (osd.exitCode !== null) osd = daemon('/usr/bin/ceph-osd', ['-i', '0']);
      return (await ceph('ceph', ['osd', 'stat'])).includes('1 up');
    }, 180_000, 'the OSD to be up');
    await startGateway();
    await ceph('radosgw-admin', ['user', 'create', '--uid=teaminfra-test', '--display-name=teaminfra test', `--access-key=${accessKeyId}`, `--secret=${secretAccessKey}`]);
  } catch (error) {
    await close();
    throw error;
  }
  const client = new S3Client({
    endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const makeBucket = async (name: string) => {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  };
  const bucket = 'teaminfra-backups';
  await makeBucket(bucket);
  return {
    endpoint, region: 'us-east-1', accessKeyId, secretAccessKey, bucket, client, makeBucket, startGateway,
    killGateway: async () => {
      const child = gateway;
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    close: async () => {
      client.destroy();
      await close();
    },
  };
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await sleep(250);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${String(last)})` : ''}`);
}
