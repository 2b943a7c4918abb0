// What a definition must never get through, each refused with a sentence naming the service and
// the key: host bind mounts, privileged mode, the host's network or PID namespace, added
// capabilities and devices would each give a team's containers the engine's machine. Any other
// Compose key outside the subset teaminfra runs is refused by name too, never ignored: a key we
// silently dropped would run a different app from the one its author wrote. A key within a
// typo's reach of one we run is named instead ("did you mean"), so the author fixes the typo.
import { nearestKey } from './nearest-key.js';

/** Compose keys teaminfra runs, at the top of the file and in a service. */
export const TOP_LEVEL_KEYS = ['name', 'version', 'services', 'volumes', 'x-teaminfra'] as const;
export const SERVICE_KEYS = ['image', 'command', 'environment', 'volumes', 'healthcheck', 'depends_on', 'user', 'ports'] as const;

const HOST_ACCESS: Record<string, string> = {
  privileged: 'privileged mode gives the container the whole machine',
  cap_add: 'added capabilities give the container powers over the machine',
  devices: "devices give the container the machine's hardware",
};

const HOST_NAMESPACES: Record<string, string> = {
  network_mode: 'network', pid: 'processes', ipc: 'shared memory', userns_mode: 'user ids',
};

/** The sentences refusing what `raw` (the parsed YAML) holds outside the subset; empty when none. */
export function refusalsOf(raw: unknown): string[] {
  if (!isRecord(raw)) return ['The file is not a Compose file: its top level must be a mapping with a "services" key.'];
  const problems: string[] = [];
  for (const key of Object.keys(raw)) {
    // Compose ignores top-level x- keys (they hold YAML anchors); so do we.
    if ((TOP_LEVEL_KEYS as readonly string[]).includes(key) || key.startsWith('x-')) continue;
    const nearest = nearestKey(key, TOP_LEVEL_KEYS.filter((known) => !(known in raw)));
    problems.push(key === 'networks'
      ? 'The top-level key "networks" is not supported: teaminfra gives each service a network of its own; remove it.'
      : nearest !== null ? `The top-level key "${key}" is not one teaminfra knows; did you mean "${nearest}"?`
        : `The top-level Compose key "${key}" is not supported by teaminfra; remove it.`);
  }
  if (isRecord(raw.services)) {
    for (const [name, service] of Object.entries(raw.services)) {
      if (isRecord(service)) problems.push(...serviceRefusals(name, service));
    }
  }
  if (isRecord(raw.volumes)) {
    for (const [name, volume] of Object.entries(raw.volumes)) {
      if (volume === null || (isRecord(volume) && Object.keys(volume).length === 0)) continue;
      problems.push(`The volume "${name}" has options (${isRecord(volume) ? Object.keys(volume).join(', ') : 'a value'}); ` +
        'teaminfra makes every volume itself on the service\'s engine, so declare it with no options ("' + name + ': {}").');
    }
  }
  return problems;
}

function serviceRefusals(name: string, service: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(service)) {
    if ((SERVICE_KEYS as readonly string[]).includes(key)) continue;
    const value = service[key];
    if (key in HOST_ACCESS) {
      problems.push(`Service "${name}" sets "${key}": refused, because ${HOST_ACCESS[key]}.`);
    } else if (key in HOST_NAMESPACES && value === 'host') {
      problems.push(`Service "${name}" sets "${key}: host": refused, because it would share the machine's ${HOST_NAMESPACES[key]} with the container.`);
    } else if (key === 'networks' || key === 'network_mode') {
      problems.push(`Service "${name}" sets "${key}": not supported, because teaminfra puts the containers of a service on a network of their own; remove it.`);
    } else {
      const nearest = nearestKey(key, SERVICE_KEYS.filter((known) => !(known in service)));
      problems.push(nearest !== null
        ? `Service "${name}" uses the key "${key}", which teaminfra does not know; did you mean "${nearest}"?`
        : `Service "${name}" uses the Compose key "${key}", which teaminfra does not support; remove it.`);
    }
  }
  if (Array.isArray(service.volumes)) {
    for (const volume of service.volumes) {
      const source = hostSource(volume);
      if (source !== null) {
        problems.push(`Service "${name}" mounts the host path "${source}" (a bind mount): refused, because a team's container ` +
          'must not reach the machine\'s files; use a named volume ("data:/path").');
      }
    }
  }
  return problems;
}

/** The host path a volume entry binds, or null for a named volume (or an entry the schema will refuse). */
function hostSource(volume: unknown): string | null {
  if (typeof volume === 'string') {
    const parts = volume.split(':');
    if (parts.length < 2) return null;
    const source = parts[0] ?? '';
    return /^[./~]/.test(source) || source.includes('/') ? source : null;
  }
  if (isRecord(volume)) {
    if (volume.type === 'bind') return typeof volume.source === 'string' ? volume.source : '(no source)';
    if (typeof volume.source === 'string' && /^[./~]/.test(volume.source)) return volume.source;
  }
  return null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
