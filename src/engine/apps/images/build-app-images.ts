// `teaminfra admin build-app-images --app NAME`: every image the definition's containers name,
// built offline on the engine from its recipe (image-recipes.ts). An image without a recipe (a
// definition an operator added, naming their own image) must already be on the engine: the
// build says which, since no registry is reachable to pull it from.
import type { DockerApi } from '../../docker/docker-api.js';
import { DockerError } from '../../docker/docker-api.js';
import { buildErpImage } from '../../docker/erp-image.js';
import type { AppDefinition } from '../app-definition.js';
import { buildDebianImage, splitImage, type BuiltImage } from './build-debian-image.js';
import { recipeOf } from './image-recipes.js';

export async function buildAppImages(api: DockerApi, app: AppDefinition, log: (line: string) => void): Promise<BuiltImage[]> {
  const images = [...new Set(app.containers.map((container) => container.image))];
  const results: BuiltImage[] = [];
  for (const image of images) {
    const recipe = recipeOf(image);
    if (recipe?.kind === 'debian') {
      results.push(await buildDebianImage(api, recipe, log));
    } else if (recipe?.kind === 'bundled-erp') {
      const built = await buildErpImage(api);
      const [repository, tag] = splitImage(image);
      await api.json('POST', `/images/${encodeURIComponent(built.image)}/tag`, { query: { repo: repository, tag } });
      results.push({ image, contentImage: built.image, built: built.built });
    } else {
      const present = await api.json<{ Id: string } | undefined>('GET', `/images/${encodeURIComponent(image)}/json`, { accept: [404] });
      if (!present) {
        throw new DockerError(`The app "${app.name}" names the image ${image}, which teaminfra has no offline recipe for and the engine at ` +
          `${api.address.text} does not have; load it there (docker load) and run this again.`, null);
      }
      results.push({ image, contentImage: image, built: false });
    }
  }
  return results;
}
