// A server's image that follows the image contract (src/engine/README.md: labels on the image)
// as a one-service app definition, so that the Docker driver runs every service one way: one
// container `erp` of the image with its one volume `data` at the contract's data directory, the
// contract's environment, its port and health path as the web container's, and its snapshot and
// verify commands as the definition's (run with the data directory, and the snapshot's target,
// appended as the labels say). This is what `src/engine/apps/bundled/demo.yml` writes down for
// the bundled image; operators' images keep working unchanged.
import type { AppCommand, AppDefinition, Template } from '../apps/app-definition.js';
import { DEFAULT_DEADLINES } from '../apps/app-definition.js';
import { CONTAINER_ENV } from '../erp-app/container-env.js';
import { CONTRACT_LABELS, type ImageContract } from './erp-image-contract.js';

/** The one container of a contract image's service, which its logs and listings name. */
export const CONTRACT_SERVICE = 'erp';
export const CONTRACT_VOLUME = 'data';

/** `name`: what the service's backups say they were taken of (its app, or `image` for an operator's image). */
export function contractDefinition(contract: ImageContract, name: string, startMs: number): AppDefinition {
  // Each of the contract's variables is the driver's built-in of the same name.
  const environment: Record<string, Template> = Object.fromEntries(Object.values(CONTAINER_ENV).map((variable) => [variable, [{ variable }]]));
  const command = (argv: string[]): AppCommand => ({ service: CONTRACT_SERVICE, command: argv, user: null, replacesEntrypoint: true });
  return {
    name,
    containers: [{
      name: CONTRACT_SERVICE, image: contract.image, command: null, environment,
      volumes: [{ volume: CONTRACT_VOLUME, target: contract.dataDir, readOnly: false }], healthcheck: null, dependsOn: [], user: null,
    }],
    volumes: [CONTRACT_VOLUME],
    web: { service: CONTRACT_SERVICE, port: contract.port, healthPath: contract.healthPath },
    database: null,
    commands: {
      // The snapshot writes to its working directory ('.'), where every snapshot command of a definition writes.
      ...(contract.snapshotCommand ? { snapshot: command([...contract.snapshotCommand, contract.dataDir, '.']) } : {}),
      ...(contract.verifyCommand ? { verify: command([...contract.verifyCommand, contract.dataDir]) } : {}),
    },
    deadlines: { startMs, migrateMs: DEFAULT_DEADLINES.migrateMs },
    secrets: [],
    initialCredentials: null,
    imageContract: { dataDirLabel: CONTRACT_LABELS.dataDir },
  };
}
