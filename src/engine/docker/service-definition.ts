// Which definition a Docker service runs, and the per-service things made from it: a service of
// an app (tryton) runs that app's registered definition, each image named by the digest the
// service was made with; any other service (the bundled demo, an operator's image) runs the
// one-service definition its server's image contract gives (contract-definition.ts). Also the
// engine's name of each of its volumes per generation of data, the values `${NAME}` stands for,
// and the settings each of its containers is made with.
import { findApp } from '../apps/app-registry.js';
import type { AppContainer, AppDefinition } from '../apps/app-definition.js';
import { renderEnvironment } from '../apps/render-environment.js';
import { smtpUri } from '../apps/smtp-uri.js';
import { DriverError, type ServiceSpec } from '../driver.js';
import { ensureNetwork } from './app-containers.js';
import { imageIdsOf } from './app-data.js';
import { containerLimitsOf } from './container-limits.js';
import { ensureVolume } from './containers.js';
import { contractDefinition } from './contract-definition.js';
import type { DockerApi } from './docker-api.js';
import type { DockerDriverOptions } from './docker-driver-options.js';
import { readDockerState } from './docker-state.js';
import { appNetworkName, appVolumeName, dataVolumeName, generationOf, LABEL, labelsOf } from './labels.js';
import type { MailRelay } from './mail-relay-of.js';
import { readServiceSecrets } from './service-secrets.js';
import { pinnedApp } from './service-images.js';

/** True for a service that runs an app's registered definition; false for one that runs its server's image (the bundled `demo` included). */
export function runsRegisteredApp(service: ServiceSpec): boolean {
  return typeof service.app === 'string' && service.app !== 'demo';
}

/** The service's definition, each image named by the digest the service was made with; `latest`: by the definition's own names (a redeploy). */
export async function definitionOf(options: DockerDriverOptions, service: ServiceSpec, images: 'pinned' | 'latest' = 'pinned'): Promise<AppDefinition> {
  if (!runsRegisteredApp(service)) {
    const contract = await options.engines.contractOf(service.server);
    const app = contractDefinition(contract, service.app ?? 'image', options.startTimeoutMs);
    return images === 'latest' ? app : pinnedApp(options.db, service.id, app);
  }
  const app = await findApp(options.db, service.app as string);
  if (!app) throw new DriverError(`The app ${service.app} of this service is no longer registered; the operator can add it again (admin add-app).`);
  return images === 'latest' ? app : pinnedApp(options.db, service.id, app);
}

/** The engine's name of one volume of the definition, for one generation of the service's data. */
export function engineVolumeName(app: AppDefinition, serviceId: string, volume: string, generation: number): string {
  // An image contract's one volume keeps the name its services always had.
  return app.imageContract ? dataVolumeName(serviceId, generation) : appVolumeName(serviceId, volume, generation);
}

/** True when a restore or copy filled this generation with data whose schema the migrate step's image made. */
export async function schemaIsCurrent(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<boolean> {
  const [first] = app.volumes;
  if (!first || !app.commands.migrate) return false;
  const volume = await api.json<{ Labels: Record<string, string> | null } | undefined>(
    'GET', `/volumes/${engineVolumeName(app, service.id, first, generation)}`, { accept: [404] });
  const schemaOf = volume?.Labels?.[LABEL.schemaOf];
  return schemaOf !== undefined && schemaOf === (await imageIdsOf(api, app))[app.commands.migrate.service];
}

/** The generation of volumes the service's containers use now: 0 until its first restore. */
export async function currentGeneration(options: DockerDriverOptions, service: ServiceSpec): Promise<number> {
  return generationOf((await readDockerState(options.db, options.secrets, service.id)).volume);
}

export async function ensureNetworkAndVolumes(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<void> {
  await ensureNetwork(api, appNetworkName(service.id), labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'network' }));
  await ensureVolumes(api, service, app, generation);
}

/** Every volume of `generation`; `schemaOf` and `stagedBy` label the ones a restore or copy fills. */
export async function ensureVolumes(
  api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number, schemaOf?: string, stagedBy: Record<string, string> = {},
): Promise<void> {
  for (const volume of app.volumes) {
    await ensureVolume(api, engineVolumeName(app, service.id, volume, generation), {
      ...labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }), ...(schemaOf ? { [LABEL.schemaOf]: schemaOf } : {}), ...stagedBy,
    });
  }
}

/**
 * The values `${NAME}` may name: the service's secrets (opened now) and the built-ins. The mail
 * ones only from a start or redeploy (`smtp`, mailRelayOf): the data steps' containers send no
 * mail, so a backup never waits on the relay's name nor on the mail catcher.
 */
export async function valuesOf(
  options: DockerDriverOptions, service: ServiceSpec, host: string, port: number | null, smtp: MailRelay | null = null,
  /** The address people use when it is not http://host:port (its https name through the server's proxy). */
  publicUrl?: string,
): Promise<Record<string, string>> {
  const secrets = await readServiceSecrets(options.db, options.secrets, service.id);
  return {
    ...secrets,
    TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name, TEAMINFRA_REVISION: String(service.revision),
    TEAMINFRA_PUBLIC_URL: publicUrl ?? (port === null ? '' : `http://${host}:${port}`),
    TEAMINFRA_SMTP_HOST: smtp?.host ?? '', TEAMINFRA_SMTP_PORT: smtp ? String(smtp.port) : '',
    TEAMINFRA_SMTP_USER: smtp?.user ?? '', TEAMINFRA_SMTP_PASSWORD: smtp?.password ?? '', TEAMINFRA_SMTP_URI: smtpUri(smtp),
  };
}

/** How one container of the definition is made for the service: over volumes of `generation`, on `network`. */
export function containerSettings(
  service: ServiceSpec, app: AppDefinition, container: AppContainer, values: Record<string, string>, generation: number,
  network = appNetworkName(service.id), extraHosts: readonly string[] = [],
) {
  return {
    serviceId: service.id, serverId: service.server.id, revision: service.revision, container, network, generation, extraHosts,
    volumeOf: (volume: string) => engineVolumeName(app, service.id, volume, generation), env: renderEnvironment(container, values),
    limits: containerLimitsOf(service.server.docker?.limits),
  };
}

/** A start's rendering of the definition: the values `${NAME}` names, and the /etc/hosts entries that pin the relay's name. */
export interface Rendered { values: Record<string, string>; hosts: readonly string[] }
