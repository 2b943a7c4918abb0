// A real image registry for the pull suites: Debian's docker-registry (distribution 2.8) on a
// free loopback port, with htpasswd (bcrypt) auth and its storage in a folder of its own. An
// engine treats 127.0.0.0/8 registries as insecure, so it speaks plain HTTP to it, as any engine
// on this machine does (a second dockerd shares the host's network). Images get into it as an
// operator's CI would put them: tagged on the test engine and pushed through the engine's API;
// the local tag then goes, so that the engine has to pull.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pack } from 'tar-stream';
import type { DockerApi } from '../../../../src/engine/docker/docker-api.js';
import { derivedImage } from './docker-team.js';

export const REGISTRY_PROGRAM = '/usr/bin/docker-registry';
export const REGISTRY_USER = 'tester';
export const REGISTRY_PASSWORD = 'registry-test-password';
/** bcrypt (cost 5: the registry checks it on every request) of REGISTRY_PASSWORD, made once with libxcrypt. */
const HTPASSWD = `${REGISTRY_USER}:$2b$05$uloDkdUWu1zjq7U4N0DOleSioY6pGGX1XhxFGEtPnucjJnw/TMexG\n`;

/** Where the registry suites run: an engine, and Debian's docker-registry (.ci/run installs it; TEAMINFRA_REQUIRE_DOCKER makes its absence fail them). */
export const registryInstalled = existsSync(REGISTRY_PROGRAM) || process.env.TEAMINFRA_REQUIRE_DOCKER === '1';

export interface TestRegistry {
  /** 127.0.0.1:PORT, as image names start with it. */
  host: string;
  port: number;
  stop(): Promise<void>;
}

export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startTestRegistry(): Promise<TestRegistry> {
  const root = mkdtempSync(join(tmpdir(), 'teaminfra-registry-'));
  const port = await freeLoopbackPort();
  writeFileSync(join(root, 'htpasswd'), HTPASSWD);
  writeFileSync(join(root, 'config.yml'), [
    'version: 0.1', 'log:', '  level: error', 'storage:', '  filesystem:', `    rootdirectory: ${join(root, 'data')}`,
    'http:', `  addr: 127.0.0.1:${port}`, 'auth:', '  htpasswd:', '    realm: teaminfra-test', `    path: ${join(root, 'htpasswd')}`, '',
  ].join('\n'));
  const child: ChildProcess = spawn(REGISTRY_PROGRAM, ['serve', join(root, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-2_000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    rmSync(root, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 30_000; ;) {
    // 401: it runs, and asks for the login.
    const status = await fetch(`http://127.0.0.1:${port}/v2/`, { signal: AbortSignal.timeout(2_000) }).then((answer) => answer.status, () => 0);
    if (status === 401) return { host: `127.0.0.1:${port}`, port, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`docker-registry did not start on 127.0.0.1:${port}: ${output}`);
    }
    await sleep(100);
  }
}

/** X-Registry-Auth as the Docker CLI sends it: base64url of the login's JSON, padded. */
export function registryAuthHeader(host: string, username = REGISTRY_USER, password = REGISTRY_PASSWORD): string {
  return Buffer.from(JSON.stringify({ username, password, serveraddress: host })).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * Pushes `base` with a top layer of `noiseBytes` random bytes to the registry as `name`
 * (repository:tag under its host), and returns the pushed digest. Nothing of it stays on the
 * engine: no engine has its top layer until it pulls it.
 */
export async function publishImage(api: DockerApi, registry: TestRegistry, base: string, name: string, noiseBytes: number): Promise<string> {
  const local = `teaminfra-test-registry-noise:${randomBytes(4).toString('hex')}`;
  const tar = pack();
  tar.entry({ name: 'teaminfra-test-noise', mode: 0o644 }, randomBytes(noiseBytes));
  tar.finalize();
  await derivedImage(api, base, local, [`LABEL io.teaminfra.test-noise=${local}`], Readable.from(tar as unknown as AsyncIterable<Buffer>));
  const [repository, tag] = name.split(':') as [string, string];
  const remote = `${registry.host}/${repository}`;
  try {
    await api.json('POST', `/images/${encodeURIComponent(local)}/tag`, { query: { repo: remote, tag } });
    const stream = await api.stream('POST', `/images/${encodeURIComponent(remote)}/push`, {
      query: { tag }, headers: { 'X-Registry-Auth': registryAuthHeader(registry.host) }, timeoutMs: 120_000,
    });
    let text = '';
    for await (const chunk of stream) text += (chunk as Buffer).toString();
    const digest = /"Digest":"(sha256:[0-9a-f]{64})"/.exec(text)?.[1];
    if (!digest) throw new Error(`the push of ${remote}:${tag} did not end with a digest: ${text.slice(-500)}`);
    return digest;
  } finally {
    await removeImage(api, `${remote}:${tag}`);
    await removeImage(api, local);
  }
}

/** Removes an image by name from the engine (only ones a suite made, once no container of the suite uses it). */
export async function removeImage(api: DockerApi, name: string): Promise<void> {
  await api.json('DELETE', `/images/${encodeURIComponent(name)}`, { query: { force: 1 }, accept: [404, 409] });
}
