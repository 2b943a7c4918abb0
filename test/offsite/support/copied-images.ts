// Images put on a second engine as a registry would bring them, but offline: saved from the first
// engine (GET /images/{name}/get) and loaded into the other (POST /images/load), streamed.
import type { DockerApi } from '../../../src/engine/docker/docker-api.js';

export async function copyImages(from: DockerApi, to: DockerApi, images: readonly string[]): Promise<void> {
  for (const image of images) {
    const saved = await from.stream('GET', `/images/${encodeURIComponent(image)}/get`, { timeoutMs: 120_000 });
    await to.upload('POST', '/images/load', saved, 'application/x-tar', { query: { quiet: 1 }, timeoutMs: 600_000 });
  }
}
