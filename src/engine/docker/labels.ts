// Every container, volume and network the Docker driver creates carries these labels, and it
// only ever lists, changes or removes objects that carry them: nothing else on a team's engine
// is touched. `role` tells a service's own container from the short-lived helpers that move
// its data, and a data volume from a server's backups volume.
export const LABEL = {
  serviceId: 'io.teaminfra.service-id',
  serverId: 'io.teaminfra.server-id',
  revision: 'io.teaminfra.revision',
  role: 'io.teaminfra.role',
  /** On a service container: the data volume it mounts (on an app's containers: dataVolumeName of the generation of volumes they mount). */
  volume: 'io.teaminfra.volume',
  /** On a helper container: the control-plane process that made it (host/pid/nonce), to tell one a crash left behind. */
  madeBy: 'io.teaminfra.made-by',
  /** On a container of an app's service: its Compose service name (database, tryton). */
  appService: 'io.teaminfra.app-service',
  /**
   * On the volumes of an app's service that a restore or copy filled: the image (engine id) of
   * the definition's migrate step whose schema the data already has, so that its first start
   * skips a migration that would change nothing.
   */
  schemaOf: 'io.teaminfra.schema-of',
  /** On the volumes a restore staged: its operation's id, so that the restore resumed after a crash finds them (restore-resume.ts). */
  stagedBy: 'io.teaminfra.staged-by',
} as const;

/** `front`: the container published on the service's port that forwards to its current revision (service-front.ts). */
export type Role = 'service' | 'helper' | 'data' | 'backups' | 'network' | 'front';

export function labelsOf(
  values: { serviceId?: string; serverId: string; revision?: number; role: Role; volume?: string; madeBy?: string; appService?: string },
): Record<string, string> {
  return {
    ...(values.appService ? { [LABEL.appService]: values.appService } : {}),
    [LABEL.serverId]: values.serverId, [LABEL.role]: values.role,
    ...(values.madeBy ? { [LABEL.madeBy]: values.madeBy } : {}),
    ...(values.serviceId ? { [LABEL.serviceId]: values.serviceId } : {}),
    ...(values.revision !== undefined ? { [LABEL.revision]: String(values.revision) } : {}),
    ...(values.volume ? { [LABEL.volume]: values.volume } : {}),
  };
}

/** The engine's `filters` query value selecting objects that carry every one of `labels`. */
export function labelFilter(labels: Record<string, string>): string {
  return JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
}

export function dataVolumeName(serviceId: string, generation = 0): string {
  return generation === 0 ? `teaminfra-data-${serviceId}` : `teaminfra-data-${serviceId}-g${generation}`;
}

/** 0 for the first volume of a service; a restore's volume is the next generation. */
export function generationOf(volume: string): number {
  const match = /-g(\d+)$/.exec(volume);
  return match ? Number(match[1]) : 0;
}

export function backupsVolumeName(serverId: string): string {
  return `teaminfra-backups-${serverId}`;
}

/** The bridge network of one service of an app: its containers find each other there by their Compose names. */
export function appNetworkName(serviceId: string): string {
  return `teaminfra-net-${serviceId}`;
}

/**
 * The engine volume of one volume of an app definition, for one service. A restore writes the
 * next generation of every volume beside the current one, and the swap names it in one row
 * (docker_services.volume, read with generationOf).
 */
export function appVolumeName(serviceId: string, volume: string, generation = 0): string {
  return `teaminfra-data-${serviceId}-${volume}${generation === 0 ? '' : `-g${generation}`}`;
}

/** One container of an app's service, per revision and data generation: a create repeated after a crash finds it (409) and adopts it. */
export function appContainerName(serviceId: string, revision: number, appService: string, generation = 0): string {
  return `teaminfra-${serviceId}-r${revision}${generation === 0 ? '' : `-g${generation}`}-${appService}`;
}

/**
 * The container an app's command ran in, kept for its output (the migrate command's): a dot
 * where a service container has a dash, so that no Compose service name can give the same name.
 */
export function appCommandContainerName(serviceId: string, revision: number, command: string, generation = 0): string {
  return `teaminfra-${serviceId}-r${revision}${generation === 0 ? '' : `-g${generation}`}.${command}`;
}

/** The front of a service (service-front.ts): one per service, across revisions. */
export function frontContainerName(serviceId: string): string {
  return `teaminfra-${serviceId}-front`;
}

/** The network on which the front reaches the current revision's web container, by the alias `current`. */
export function frontNetworkName(serviceId: string): string {
  return `teaminfra-front-${serviceId}`;
}
