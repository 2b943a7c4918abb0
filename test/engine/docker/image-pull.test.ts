// ensureImage against a real registry (Debian's docker-registry with htpasswd auth, on
// loopback) and the real test engine: an image only the registry has is pulled with the
// server's login and shown as one step; an image on the engine is never pulled; a wrong
// password, no password, an image the registry lacks, a registry that is not there and a pull
// that stalls mid-way each fail with a sentence naming the registry, within the deadline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerApi } from '../../../src/engine/docker/docker-api.js';
import { parseEngineAddress } from '../../../src/engine/docker/engine-address.js';
import { buildErpImage } from '../../../src/engine/docker/erp-image.js';
import { ensureImage, type PullSettings } from '../../../src/engine/docker/image-pull.js';
import { parseImageReference } from '../../../src/engine/docker/image-reference.js';
import type { RegistryLogin } from '../../../src/engine/docker/registry-credentials.js';
import { StepLog } from '../../../src/engine/operation-steps.js';
import { withStepProgress } from '../../../src/engine/step-progress.js';
import { dockerAvailable, TEST_DOCKER_HOST } from './support/docker-engine.js';
import { startStallingProxy } from './support/stalling-proxy.js';
import {
  publishImage, registryInstalled, REGISTRY_PASSWORD, REGISTRY_USER, removeImage, startTestRegistry, type TestRegistry,
} from './support/test-registry.js';

const LOGIN: RegistryLogin = { username: REGISTRY_USER, password: REGISTRY_PASSWORD };
const WRONG_PASSWORD = 'not-the-registry-password';

describe.runIf(dockerAvailable && registryInstalled)('ensureImage', () => {
  const api = new DockerApi(parseEngineAddress(TEST_DOCKER_HOST));
  let registry: TestRegistry;
  let base: string;
  let pushedDigest: string;
  const pulled: string[] = [];
  const settings = (login: RegistryLogin | null): PullSettings => ({ serverId: 'srv_pulltest', namedBy: 'the app registry-test', login });
  const failed = (name: string) =>
    `The image ${name} of the app registry-test could not be pulled onto the Docker engine at ${api.address.text}`;

  beforeAll(async () => {
    registry = await startTestRegistry();
    base = (await buildErpImage(api)).image;
    pushedDigest = await publishImage(api, registry, base, 'teaminfra-test/pull:1', 2_500_000);
    await publishImage(api, registry, base, 'teaminfra-test/guarded:1', 1_000);
  }, 300_000);

  afterAll(async () => {
    for (const name of pulled) await removeImage(api, name);
    await registry?.stop();
    await api.close();
  }, 120_000);

  it('pulls an image only the registry has, with the login, and shows the pull as one step with its size', async () => {
    const name = `${registry.host}/teaminfra-test/pull:1`;
    pulled.push(name);
    const steps = new StepLog();
    const image = await withStepProgress(steps, () => ensureImage(api, parseImageReference(name), settings(LOGIN)));
    expect(image.repoDigests).toContain(`${registry.host}/teaminfra-test/pull@${pushedDigest}`);
    expect(steps.steps).toEqual([
      expect.objectContaining({ step: `Pulled ${name} from ${registry.host}`, outcome: 'done', detail: expect.stringMatching(/^2\.\d MB of 2\.\d MB$/) }),
    ]);
  });

  it('shows a slow pull\'s progress in its step a few times, not at every chunk', async () => {
    await publishImage(api, registry, base, 'teaminfra-test/slow:1', 5_000_000);
    const proxy = await startStallingProxy(registry.port, { bytesPerSecond: 1_000_000 });
    const name = `${proxy.host}/teaminfra-test/slow:1`;
    pulled.push(name);
    const saved: string[] = [];
    try {
      const began = Date.now();
      await withStepProgress(new StepLog((steps) => saved.push(steps)), () => ensureImage(api, parseImageReference(name), settings(LOGIN)));
      const seconds = (Date.now() - began) / 1000;
      const details = saved.map((steps) => (JSON.parse(steps) as { step: string; detail: string | null }[])[0]!)
        .filter((step) => step.step === `Pulling ${name} from ${proxy.host}`).map((step) => step.detail);
      expect(details[0]).toBeNull();
      expect(details.slice(1).length).toBeGreaterThanOrEqual(1);
      for (const detail of details.slice(1)) expect(detail).toMatch(/^[\d.]+ MB of [\d.]+ MB$/);
      // One update every two seconds at most, whatever the number of chunks.
      expect(details.length).toBeLessThanOrEqual(1 + Math.ceil(seconds / 2));
      expect(saved.at(-1)).toContain(`"step":"Pulled ${name} from ${proxy.host}"`);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('never pulls an image the engine already has, even one named after a registry that is not there', async () => {
    const name = '127.0.0.1:9/teaminfra-test/local:1';
    pulled.push(name);
    await api.json('POST', `/images/${encodeURIComponent(base)}/tag`, { query: { repo: '127.0.0.1:9/teaminfra-test/local', tag: '1' } });
    const steps = new StepLog();
    const image = await withStepProgress(steps, () => ensureImage(api, parseImageReference(name), settings(null)));
    expect(image.repoDigests).toEqual(expect.not.arrayContaining([expect.stringContaining('127.0.0.1:9/')]));
    expect(steps.steps).toEqual([]);
  });

  it('fails with a sentence naming the registry and the server when the registry refuses the password set', async () => {
    const name = `${registry.host}/teaminfra-test/guarded:1`;
    const steps = new StepLog();
    const error = await failureOf(withStepProgress(steps, () => ensureImage(api, parseImageReference(name), settings({ username: REGISTRY_USER, password: WRONG_PASSWORD }))));
    expect(error.reason).toBe(`${failed(name)}: the registry ${registry.host} refused the credentials set for server srv_pulltest; the operator sets them ` +
      `again with "teaminfra admin set-registry-credentials --server srv_pulltest --registry ${registry.host} --username USER --password-file FILE", then tries again.`);
    expect(steps.steps).toEqual([expect.objectContaining({ step: `Pulling ${name} from ${registry.host}`, outcome: 'failed', detail: error.reason })]);
    expect(JSON.stringify(steps.steps)).not.toContain(WRONG_PASSWORD);
  });

  it('asks for credentials when the server has none for the registry', async () => {
    const name = `${registry.host}/teaminfra-test/guarded:1`;
    await expect(ensureImage(api, parseImageReference(name), settings(null))).rejects.toMatchObject({
      reason: `${failed(name)}: the registry ${registry.host} asks for credentials, and server srv_pulltest has none for it; the operator sets them with ` +
        `"teaminfra admin set-registry-credentials --server srv_pulltest --registry ${registry.host} --username USER --password-file FILE", then tries again.`,
    });
  });

  it('says that the registry has no such image', async () => {
    const name = `${registry.host}/teaminfra-test/never-pushed:1`;
    await expect(ensureImage(api, parseImageReference(name), settings(LOGIN))).rejects.toMatchObject({
      reason: `${failed(name)}: the registry ${registry.host} has no image ${name}; the operator pushes it there, or names another image ` +
        "in the app's definition (teaminfra admin add-app --replace).",
    });
  });

  it('says that the engine could not reach a registry that is not there', async () => {
    const name = '127.0.0.1:9/teaminfra-test/nowhere:1';
    await expect(ensureImage(api, parseImageReference(name), settings(null))).rejects.toMatchObject({
      reason: expect.stringMatching(new RegExp(`^${escaped(failed(name))}: the engine could not reach the registry 127\\.0\\.0\\.1:9 \\(.*connection refused.*\\); ` +
        "check that the registry runs and that the engine's machine reaches it")),
    });
  });

  it('fails within its deadline, with a sentence, when the pull stalls mid-way', async () => {
    await publishImage(api, registry, base, 'teaminfra-test/stall:1', 8_000_000);
    const proxy = await startStallingProxy(registry.port, { budget: 256 * 1024 });
    const quick = new DockerApi(parseEngineAddress(TEST_DOCKER_HOST), 3_000);
    const name = `${proxy.host}/teaminfra-test/stall:1`;
    try {
      const began = Date.now();
      const error = await failureOf(ensureImage(quick, parseImageReference(name), settings(LOGIN)));
      expect(error.reason).toMatch(new RegExp(`^${escaped(failed(name).replace(api.address.text, quick.address.text))}: the pull from the registry ` +
        `${escaped(proxy.host)} stalled \\(nothing moved for 3 s(, after [\\d.]+ MB of [\\d.]+ MB)?\\); check the registry and the network between it and the engine, then try again\\.$`));
      expect(proxy.stalled).toBe(true);
      expect(Date.now() - began).toBeLessThan(30_000);
    } finally {
      await quick.close();
      await proxy.close();
      await removeImage(api, name);
    }
  }, 120_000);
});

async function failureOf(call: Promise<unknown>): Promise<{ reason: string }> {
  return call.then(() => { throw new Error('it succeeded'); }, (error: unknown) => error as { reason: string });
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
