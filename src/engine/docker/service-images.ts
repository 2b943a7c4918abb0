// Which image each container of an app's service runs, and that its engine has them. A service
// records the digest of each image it was made with (docker_services.image_digests), so that
// its later starts, restores, backups and copies, on its engine or on another one, run exactly
// that image, pulled by digest (`repository@sha256:...`) where an engine lacks it, even once
// the tag has moved on in the registry. A redeploy is what takes a newer image: it pulls the
// definition's names again and records the new digests once it has succeeded.
//
// An image that came from no registry (built offline by build-app-images, or loaded by the
// operator) has no digest to record: it runs by its name, as before, and is never pulled. An
// image build-app-images has a recipe for is the operator's to build, never pulled.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { AppDefinition } from '../apps/app-definition.js';
import { recipeOf } from '../apps/images/image-recipes.js';
import { DriverError, type ServiceSpec } from '../driver.js';
import { readImageDigests, writeImageDigests } from './docker-state.js';
import type { EngineRegistry } from './engine-registry.js';
import { ensureImage, inspectImage, type EngineImage } from './image-pull.js';
import { familiarRepository, parseImageReference, pinnedName, type ImageReference } from './image-reference.js';
import { findRegistryCredentials, type RegistryLogin } from './registry-credentials.js';

export interface ServiceImagesDeps {
  db: Kysely<Database>;
  secrets: SecretBox;
  engines: EngineRegistry;
}

/** The definition with each image the service recorded a digest for named by that digest. */
export async function pinnedApp(db: Kysely<Database>, serviceId: string, app: AppDefinition): Promise<AppDefinition> {
  const digests = await readImageDigests(db, serviceId);
  if (Object.keys(digests).length === 0) return app;
  return { ...app, containers: app.containers.map((container) => ({ ...container, image: digests[container.image] ?? container.image })) };
}

export interface EnsureOptions {
  /** Pull each name from a registry again, even when the engine has it (a redeploy, given the definition's own names). */
  latest?: boolean;
  /** The service whose digests a new one takes (a copy, its source's). */
  digestsOf?: string;
  /** False: the caller records the digests with record(), once what used them succeeded (a redeploy). */
  record?: boolean;
}

/**
 * Every image of `app` (as appOf gives it: pinned, or the definition's own names for a redeploy)
 * on the service's engine, pulled where missing; the digests of the images it runs recorded.
 */
export async function ensureServiceImages(
  deps: ServiceImagesDeps, service: ServiceSpec, app: AppDefinition, options: EnsureOptions = {},
): Promise<{ record(): Promise<void> }> {
  const { api, address } = deps.engines.engineOf(service.server);
  const recorded = await readImageDigests(deps.db, options.digestsOf ?? service.id);
  const names = new Set(app.containers.map((container) => container.image));
  // Kept: the digests this app is already named by (a pinned app's names are the digests themselves).
  const digests: Record<string, string> = Object.fromEntries(Object.entries(recorded).filter(([, pinned]) => names.has(pinned)));
  const logins = new Map<string, RegistryLogin | null>();
  for (const name of names) {
    if (recipeOf(name)) {
      if (await inspectImage(api, name)) continue;
      throw new DriverError(`The image ${name} of the app ${app.name} is not on the Docker engine ${address.text}; the operator builds it ` +
        `with "teaminfra admin build-app-images --app ${app.name} --docker-host ${address.text}", then tries again.`);
    }
    const reference = parseImageReference(name);
    if (!logins.has(reference.registry)) {
      logins.set(reference.registry, await findRegistryCredentials(deps.db, deps.secrets, service.server.id, reference.registry));
    }
    const image = await ensureImage(api, reference, {
      serverId: service.server.id, namedBy: `the app ${app.name}`, login: logins.get(reference.registry) ?? null,
      refresh: Boolean(options.latest) && reference.digest === null && recorded[name] !== undefined,
    });
    const digest = reference.digest === null ? digestOf(reference, image) : undefined;
    if (digest) digests[name] = pinnedName(reference, digest);
  }
  const record = () => writeImageDigests(deps.db, service.id, digests);
  if (options.record !== false) await record();
  return { record };
}

/** The digest the image has in the registry `reference` names; none for an image that never came from it. */
function digestOf(reference: ImageReference, image: EngineImage): string | undefined {
  const prefix = `${familiarRepository(reference)}@`;
  return image.repoDigests.find((each) => each.startsWith(prefix))?.slice(prefix.length);
}
