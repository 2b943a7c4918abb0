// The image contract (documented in src/engine/README.md) as the labels an image carries, and
// those of the bundled ERP image. An image without them gets the defaults below; one without
// a snapshot command is backed up by stop-copy-start.
export const CONTRACT_LABELS = {
  /** The TCP port the application listens on inside the container. */
  port: 'io.teaminfra.port',
  /** The directory that holds all of the service's data: the named volume is mounted there. */
  dataDir: 'io.teaminfra.data-dir',
  /** An HTTP path answering 2xx once the application serves requests. */
  healthPath: 'io.teaminfra.health-path',
  /** A command (arguments separated by spaces) run inside the running container with DATA_DIR and TARGET_DIR appended: it writes one consistent copy of the data to TARGET_DIR. */
  snapshotCommand: 'io.teaminfra.snapshot-command',
  /** A command run in a container of the image on restored data with DATA_DIR appended: exit 0 if the data is usable. */
  verifyCommand: 'io.teaminfra.verify-command',
  /** A command run in a helper container of the image with backup files appended (paths in the backups volume): removes them. */
  removeCommand: 'io.teaminfra.remove-command',
} as const;

export const CONTRACT_DEFAULTS = { port: 8080, dataDir: '/data', healthPath: '/health', removeCommand: 'rm -f --' } as const;

export const BUNDLED_IMAGE_REPOSITORY = 'teaminfra-erp';

const NODE = '/usr/local/bin/node';
const DATA_COMMAND = '/app/dist/src/engine/erp-app/data-command.js';

export const BUNDLED_IMAGE_COMMAND = [NODE, '/app/dist/src/engine/erp-app/container-main.js'];

export const BUNDLED_IMAGE_LABELS: Record<string, string> = {
  [CONTRACT_LABELS.port]: String(CONTRACT_DEFAULTS.port),
  [CONTRACT_LABELS.dataDir]: CONTRACT_DEFAULTS.dataDir,
  [CONTRACT_LABELS.healthPath]: CONTRACT_DEFAULTS.healthPath,
  [CONTRACT_LABELS.snapshotCommand]: `${NODE} ${DATA_COMMAND} snapshot`,
  [CONTRACT_LABELS.verifyCommand]: `${NODE} ${DATA_COMMAND} verify`,
  // The bundled image has no shell and no rm: its Node removes the files.
  [CONTRACT_LABELS.removeCommand]: `${NODE} ${DATA_COMMAND} remove`,
};

export interface ImageContract {
  image: string;
  port: number;
  dataDir: string;
  healthPath: string;
  snapshotCommand: string[] | null;
  verifyCommand: string[] | null;
  removeCommand: string[];
}

export function contractOf(image: string, labels: Record<string, string> | null | undefined): ImageContract {
  const label = (key: string) => labels?.[key]?.trim() || undefined;
  const command = (key: string) => label(key)?.split(/\s+/) ?? null;
  const port = Number(label(CONTRACT_LABELS.port) ?? CONTRACT_DEFAULTS.port);
  return {
    image,
    port: Number.isInteger(port) && port > 0 && port < 65536 ? port : CONTRACT_DEFAULTS.port,
    dataDir: label(CONTRACT_LABELS.dataDir) ?? CONTRACT_DEFAULTS.dataDir,
    healthPath: label(CONTRACT_LABELS.healthPath) ?? CONTRACT_DEFAULTS.healthPath,
    snapshotCommand: command(CONTRACT_LABELS.snapshotCommand),
    verifyCommand: command(CONTRACT_LABELS.verifyCommand),
    removeCommand: command(CONTRACT_LABELS.removeCommand) ?? CONTRACT_DEFAULTS.removeCommand.split(' '),
  };
}
