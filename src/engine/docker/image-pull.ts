// Makes sure a Docker engine has an image, pulling it from its registry when it does not (or,
// for a redeploy, pulling its tag again): the engine's own pull (POST /images/create), with the
// server's login to that registry (registry-credentials.ts) in X-Registry-Auth when the
// operator set one. The engine answers with a stream of JSON progress lines; it is read with the
// engine's deadline on silence (docker-api.ts), never on its length, so a large image may take
// as long as it keeps moving, and one that stalls fails within the deadline; the engine ends its
// pull when the connection closes. Progress goes to the operation's steps (step-progress.ts) a
// few times a minute, not per chunk. Every failure is a sentence naming the registry and what
// the operator does; no password reaches a sentence, a step or a log.
import type { Readable } from 'node:stream';
import { DriverError } from '../driver.js';
import { reportStepProgress } from '../step-progress.js';
import { DockerError, seconds, type DockerApi } from './docker-api.js';
import { DOCKER_HUB, type ImageReference } from './image-reference.js';
import type { RegistryLogin } from './registry-credentials.js';

/** How often a pull's step is updated while it runs. */
const PROGRESS_EVERY_MS = 2_000;

export interface PullSettings {
  /** For the sentences: the server whose engine pulls, and what names the image (`the app tryton`, `server srv_...`). */
  serverId: string;
  namedBy: string;
  /** The server's login to the image's registry, when the operator set one. */
  login: RegistryLogin | null;
  /** Pull even when the engine has the image: a redeploy takes the newest image under its tag. */
  refresh?: boolean;
}

export interface EngineImage {
  id: string;
  /** `repository@sha256:...` for each registry the image came from; empty for an image built or loaded on the engine. */
  repoDigests: string[];
  /** Its labels (an image contract's: erp-image-contract.ts). */
  labels: Record<string, string>;
}

export async function inspectImage(api: DockerApi, name: string): Promise<EngineImage | undefined> {
  const found = await api.json<{ Id: string; RepoDigests: string[] | null; Config?: { Labels: Record<string, string> | null } } | undefined>(
    'GET', `/images/${encodeURIComponent(name)}/json`, { accept: [404] });
  return found && { id: found.Id, repoDigests: found.RepoDigests ?? [], labels: found.Config?.Labels ?? {} };
}

/** The image on the engine, pulled first when the engine lacks it (or `refresh`). An image already there is never pulled otherwise. */
export async function ensureImage(api: DockerApi, reference: ImageReference, settings: PullSettings): Promise<EngineImage> {
  if (!settings.refresh) {
    const present = await inspectImage(api, reference.text);
    if (present) return present;
  }
  await pullImage(api, reference, settings);
  const pulled = await inspectImage(api, reference.text);
  if (!pulled) throw new DriverError(`The Docker engine at ${api.address.text} pulled ${reference.text} but does not list it; try again.`);
  return pulled;
}

async function pullImage(api: DockerApi, reference: ImageReference, settings: PullSettings): Promise<void> {
  const key = `pull:${reference.text}`;
  const pulling = `Pulling ${reference.text} from ${reference.registry}`;
  const progress = new PullProgress();
  reportStepProgress(key, pulling, null);
  let reported = Date.now();
  try {
    const stream = await api.stream('POST', '/images/create', {
      query: { fromImage: reference.repository, tag: reference.digest ?? reference.tag ?? 'latest' },
      headers: settings.login ? { 'X-Registry-Auth': registryAuth(settings.login, reference.registry) } : {},
    });
    for await (const message of jsonLines(stream)) {
      const failed = message.errorDetail?.message ?? message.error;
      if (failed) throw new RegistryRefusal(failed);
      progress.add(message);
      if (Date.now() - reported >= PROGRESS_EVERY_MS) {
        reported = Date.now();
        reportStepProgress(key, pulling, progress.text());
      }
    }
  } catch (error) {
    if (!(error instanceof DockerError || error instanceof RegistryRefusal)) throw error;
    const reason = pullFailure(api, reference, settings, error, progress);
    reportStepProgress(key, pulling, reason, 'failed');
    throw new DriverError(reason, false, { cause: error });
  }
  reportStepProgress(key, `Pulled ${reference.text} from ${reference.registry}`, progress.text());
}

/** The login as the engine takes it: base64url of its JSON, padded (the engine ignores an auth it cannot decode). */
function registryAuth(login: RegistryLogin, registry: string): string {
  const serveraddress = registry === DOCKER_HUB ? 'https://index.docker.io/v1/' : registry;
  return Buffer.from(JSON.stringify({ username: login.username, password: login.password, serveraddress })).toString('base64')
    .replace(/\+/g, '-').replace(/\//g, '_');
}

/** A pull the engine began and then ended with the registry's error, in the stream. */
class RegistryRefusal extends Error {}

function pullFailure(api: DockerApi, reference: ImageReference, settings: PullSettings, error: DockerError | RegistryRefusal, progress: PullProgress): string {
  const { registry } = reference;
  const failed = `The image ${reference.text} of ${settings.namedBy} could not be pulled onto the Docker engine at ${api.address.text}`;
  const setCommand = `teaminfra admin set-registry-credentials --server ${settings.serverId} --registry ${registry} --username USER --password-file FILE`;
  if (error instanceof DockerError && error.timedOut) {
    const moved = progress.text();
    return `${failed}: the pull from the registry ${registry} stalled (nothing moved for ${seconds(api.defaultTimeoutMs)}` +
      `${moved ? `, after ${moved}` : ''}); check the registry and the network between it and the engine, then try again.`;
  }
  if (error instanceof DockerError && error.engineMessage === undefined) return error.reason;
  const message = scrubbed(error instanceof DockerError ? error.engineMessage ?? '' : error.message, settings.login);
  const lower = message.toLowerCase();
  const denied = /pull access denied|requested access to the resource is denied/.test(lower);
  if (/unauthorized|authentication required|no basic auth credentials|incorrect username or password/.test(lower) || (denied && settings.login)) {
    return settings.login
      ? `${failed}: the registry ${registry} refused the credentials set for server ${settings.serverId}; the operator sets them again with "${setCommand}", then tries again.`
      : `${failed}: the registry ${registry} asks for credentials, and server ${settings.serverId} has none for it; the operator sets them with "${setCommand}", then tries again.`;
  }
  if (denied) {
    return `${failed}: the registry ${registry} has no image ${reference.text}, or gives it only with credentials; the operator pushes it there, ` +
      `names another image in the app's definition (teaminfra admin add-app --replace), or sets credentials with "${setCommand}".`;
  }
  if ((error instanceof DockerError && error.status === 404) || /manifest unknown|not found|name unknown/.test(lower)) {
    return `${failed}: the registry ${registry} has no image ${reference.text}; the operator pushes it there, or names another image ` +
      "in the app's definition (teaminfra admin add-app --replace).";
  }
  if (/dial tcp|no such host|connection refused|i\/o timeout|tls:|http response to https client|network is unreachable|\beof\b|timeout/.test(lower)) {
    return `${failed}: the engine could not reach the registry ${registry} (${message.slice(0, 200)}); check that the registry runs and that ` +
      "the engine's machine reaches it (a registry on plain HTTP must be among the engine's insecure registries), then try again.";
  }
  return `${failed}: the registry ${registry} or the engine refused it (${message.slice(0, 300)}).`;
}

/** An engine's or registry's text with the server's password taken out, should either ever echo it. */
function scrubbed(text: string, login: RegistryLogin | null): string {
  return login && login.password.length > 0 ? text.split(login.password).join('[redacted]') : text;
}

interface PullMessage {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
  errorDetail?: { message?: string };
}

/** The engine's progress stream, one JSON object per line (a line may span chunks). */
async function* jsonLines(stream: Readable): AsyncGenerator<PullMessage> {
  let buffered = '';
  for await (const chunk of stream) {
    buffered += (chunk as Buffer).toString('utf8');
    let end: number;
    while ((end = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line) yield parsedLine(line);
    }
  }
  if (buffered.trim()) yield parsedLine(buffered.trim());
}

function parsedLine(line: string): PullMessage {
  try {
    return JSON.parse(line) as PullMessage;
  } catch {
    return { status: line };
  }
}

/** Bytes downloaded of the layers whose size is known so far (the engine learns each layer's size as it begins it). */
class PullProgress {
  private readonly layers = new Map<string, { current: number; total: number }>();

  add(message: PullMessage): void {
    if (!message.id) return;
    const layer = this.layers.get(message.id);
    const total = message.progressDetail?.total;
    if (message.status === 'Downloading' && total) {
      this.layers.set(message.id, { current: message.progressDetail?.current ?? 0, total });
    } else if (layer && (message.status === 'Download complete' || message.status === 'Pull complete')) {
      layer.current = layer.total;
    }
  }

  /** "45 MB of 120 MB", or null when nothing was downloaded (every layer was already on the engine). */
  text(): string | null {
    let current = 0;
    let total = 0;
    for (const layer of this.layers.values()) {
      current += layer.current;
      total += layer.total;
    }
    return total === 0 ? null : `${megabytes(current)} of ${megabytes(total)}`;
  }
}

function megabytes(bytes: number): string {
  const mb = bytes / 1e6;
  return `${mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB`;
}
