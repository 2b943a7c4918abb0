// The proxy's image on an engine: Debian bookworm's Caddy, built offline from its recipe
// (src/engine/apps/images/image-recipes.ts) like the tryton images. `teaminfra admin
// build-proxy-image` builds it; starting a proxy builds it first when the engine lacks it.
import type { DockerApi } from '../docker-api.js';
import { buildDebianImage, type BuiltImage } from '../../apps/images/build-debian-image.js';
import { PROXY_IMAGE, recipeOf, type DebianImageRecipe } from '../../apps/images/image-recipes.js';

export { PROXY_ADMIN_SOCKET, PROXY_IMAGE, PROXY_STATE_DIR } from '../../apps/images/image-recipes.js';

export function proxyRecipe(): DebianImageRecipe {
  return recipeOf(PROXY_IMAGE) as DebianImageRecipe;
}

/** The proxy image on the engine under its content tag and as `teaminfra-proxy:2.6`; a lookup when it is there already. */
export async function ensureProxyImage(api: DockerApi, log: (line: string) => void = () => undefined): Promise<BuiltImage> {
  return buildDebianImage(api, proxyRecipe(), log);
}
