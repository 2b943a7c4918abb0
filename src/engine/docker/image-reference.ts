// An image's name as Docker reads it (`postgres:16`, `registry.example.com:5000/team/erp:1.2`,
// `...@sha256:...`): which registry it comes from, the repository the engine is asked to pull,
// and the tag or digest. Docker's rule: the first part is a registry only when it has a dot or a
// port or is `localhost`; otherwise the image is on Docker Hub (docker.io).

export interface ImageReference {
  /** As the definition names it. */
  text: string;
  /** The registry's HOST[:PORT], lower case; `docker.io` for Docker Hub. */
  registry: string;
  /** The name without tag or digest, as written (what the engine is asked to pull). */
  repository: string;
  tag: string | null;
  /** `sha256:...` when the name pins one. */
  digest: string | null;
}

export const DOCKER_HUB = 'docker.io';
const HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

const HOST_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)(:[0-9]{1,5})?$/i;

export function parseImageReference(text: string): ImageReference {
  const at = text.indexOf('@');
  const digest = at === -1 ? null : text.slice(at + 1);
  const named = at === -1 ? text : text.slice(0, at);
  const lastSlash = named.lastIndexOf('/');
  const colon = named.lastIndexOf(':');
  const tagged = colon > lastSlash;
  const repository = tagged ? named.slice(0, colon) : named;
  const tag = tagged ? named.slice(colon + 1) : null;
  const first = repository.split('/')[0]!;
  const hasRegistry = repository.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return { text, registry: hasRegistry ? registryName(first) : DOCKER_HUB, repository, tag: tag ?? (digest ? null : 'latest'), digest };
}

/** A registry as the operator may write it, the way credentials are kept: lower case, Docker Hub's names as `docker.io`. */
export function registryName(hostPort: string): string {
  const lower = hostPort.trim().toLowerCase();
  return HUB_ALIASES.has(lower) ? DOCKER_HUB : lower;
}

export function isRegistryName(text: string): boolean {
  const port = /:(\d+)$/.exec(text)?.[1];
  return HOST_PORT.test(text) && (port === undefined || (Number(port) >= 1 && Number(port) <= 65_535));
}

/**
 * The name the engine lists in an image's RepoDigests for this repository: Docker Hub's
 * official images without `docker.io/library/`, others without `docker.io/`.
 */
export function familiarRepository(reference: ImageReference): string {
  return reference.repository.replace(/^(docker\.io|index\.docker\.io)\//, '').replace(/^library\//, '');
}

/** `repository@digest`: the exact image, on any engine that can pull from its registry. */
export function pinnedName(reference: ImageReference, digest: string): string {
  return `${reference.repository}@${digest}`;
}
