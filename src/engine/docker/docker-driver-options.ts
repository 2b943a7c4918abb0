// What the Docker driver is given by the node it runs in: the control plane's database and
// secret box, the engines, this node's data directory, where copies' mail and production
// services' mail go (mail-relay-of.ts), and the deadlines of the installation's settings.
import type { EngineRegistry } from './engine-registry.js';
import type { MailRelaySources } from './mail-relay-of.js';

export interface DockerDriverOptions extends MailRelaySources {
  engines: EngineRegistry;
  /** This node's data directory: where backups are written before they go to the engine (and cached after), and a copy's archive while it is made. */
  dataDir: string;
  takenPorts(): Promise<ReadonlySet<number>>;
  /** How long an image contract's service may take to answer its health path (an app definition gives its own). */
  startTimeoutMs: number;
  stopGraceMs: number;
}
