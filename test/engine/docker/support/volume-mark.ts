// A mark put at the root of a Docker volume, and read back: a volume made again (a restore that
// stages its data anew) has lost it. Through a helper container of `image` that mounts the volume.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pack as tarPack } from 'tar-stream';
import { extractSingleFile } from '../../../../src/engine/docker/archives.js';
import { createHelper } from '../../../../src/engine/docker/containers.js';
import { DockerError, type DockerApi } from '../../../../src/engine/docker/docker-api.js';

const MARK = 'teaminfra-test-mark';
const AT = '/marked';

export interface MarkedVolume { api: DockerApi; image: string; serverId: string; volume: string }

export async function markVolume(where: MarkedVolume, text: string): Promise<void> {
  const pack = tarPack();
  pack.entry({ name: MARK }, text);
  pack.finalize();
  await withHelper(where, (id) => where.api.upload('PUT', `/containers/${id}/archive`, pack as unknown as Readable, 'application/x-tar', { query: { path: AT } }));
}

/** The volume's mark, or undefined when it has none. */
export async function markOf(where: MarkedVolume): Promise<string | undefined> {
  return withHelper(where, async (id) => {
    const tar = await where.api.stream('GET', `/containers/${id}/archive`, { query: { path: `${AT}/${MARK}` } }).catch((error: unknown) => {
      if (error instanceof DockerError && error.status === 404) return undefined;
      throw error;
    });
    if (!tar) return undefined;
    const folder = mkdtempSync(join(tmpdir(), 'teaminfra-mark-'));
    try {
      await extractSingleFile(tar, join(folder, MARK));
      return readFileSync(join(folder, MARK), 'utf8');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
}

async function withHelper<T>(where: MarkedVolume, use: (id: string) => Promise<T>): Promise<T> {
  // A service id of no service: the suites' counts of a service's helpers never see it.
  const helper = await createHelper(where.api, { image: where.image, serviceId: 'svc_test_mark', serverId: where.serverId, mounts: [{ volume: where.volume, at: AT }] });
  try {
    return await use(helper.id);
  } finally {
    await helper.remove();
  }
}
