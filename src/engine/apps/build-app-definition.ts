// The last step: a Compose file that has the right shape becomes the typed model, and what
// refers to what is checked (every dependency, volume, command and variable names something the
// file declares; one web-facing container with one published port). Problems are collected, so
// an author sees all of them at once.
import {
  BUILT_IN_VARIABLES, COMMAND_NAMES, CREDENTIAL_VARIABLES, DEFAULT_DEADLINES, type AppCommand, type AppContainer, type AppDefinition,
  type DependencyCondition, type Healthcheck, type InitialCredentialsTemplate, type Template, type TemplatePart, type VolumeMount,
} from './app-definition.js';
import { ADMIN_LOGIN, ADMIN_PASSWORD_SECRET } from './initial-credentials.js';
import { durationMs, type ComposeFile, type ComposeService } from './compose-schema.js';

export function buildAppDefinition(file: ComposeFile, name: string, problems: string[]): AppDefinition {
  const x = file['x-teaminfra'];
  const declaredVolumes = Object.keys(file.volumes ?? {});
  const secrets = x.secrets ?? [];
  const variables = new Set<string>([...BUILT_IN_VARIABLES, ...secrets]);
  const serviceNames = Object.keys(file.services);
  const containers = Object.entries(file.services).map(([service, spec]) => container(service, spec, {
    serviceNames, declaredVolumes, variables, problems,
  }));

  waitsAreKept(containers, problems);

  const mounted = new Set(containers.flatMap((each) => each.volumes.map((mount) => mount.volume)));
  for (const volume of declaredVolumes) {
    if (!mounted.has(volume)) problems.push(`The volume "${volume}" is declared but no service mounts it; remove it.`);
  }

  const webSpec = file.services[x.web];
  let port = 0;
  if (!webSpec) problems.push(`x-teaminfra.web names "${x.web}", which is not a service of this file.`);
  for (const [service, spec] of Object.entries(file.services)) {
    const ports = spec.ports ?? [];
    if (service !== x.web && ports.length > 0) {
      problems.push(`Service "${service}" publishes a port, but only the web-facing service ("${x.web}") may; remove its "ports".`);
    }
  }
  if (webSpec) {
    const ports = webSpec.ports ?? [];
    if (ports.length === 0) {
      problems.push(`Service "${x.web}" is web-facing and must publish exactly one port, the container's port it serves on (such as "ports: ['8000']"); it publishes none.`);
    } else if (ports.length > 1) {
      const given = ports.map((each) => `"${typeof each === 'object' ? each.target : each}"`).join(', ');
      problems.push(`Service "${x.web}" is web-facing and must publish exactly one port; it publishes ${ports.length} (${given}): keep only the one it serves on.`);
    } else port = containerPort(x.web, ports[0]!, problems);
  }
  if (x.database !== undefined && !file.services[x.database]) {
    problems.push(`x-teaminfra.database names "${x.database}", which is not a service of this file.`);
  }
  if (x.database !== undefined && x.database === x.web) problems.push('x-teaminfra.database and x-teaminfra.web name the same service; they must be two.');
  // A restore or copy starts the database on new volumes and runs `restore` once it is healthy: without a healthcheck it never is.
  const databaseContainer = containers.find((each) => each.name === x.database);
  if (databaseContainer && x.commands?.restore && !databaseContainer.healthcheck) {
    problems.push(`x-teaminfra.database names "${x.database}", which has no healthcheck: a restore or copy starts it on new volumes and runs ` +
      'the restore command once it is healthy, so give it one (healthcheck: test: ["CMD", ...]).');
  }

  const commands: Partial<Record<(typeof COMMAND_NAMES)[number], AppCommand>> = {};
  for (const commandName of COMMAND_NAMES) {
    const entry = x.commands?.[commandName];
    if (!entry) continue;
    if (!file.services[entry.service]) problems.push(`x-teaminfra.commands.${commandName} runs in "${entry.service}", which is not a service of this file.`);
    commands[commandName] = { service: entry.service, command: entry.command, user: entry.user ?? null };
  }
  if (commands.restore && !commands.snapshot) problems.push('x-teaminfra.commands has "restore" but no "snapshot": a restore needs the snapshot it reads.');

  return {
    name,
    containers: startOrder(containers, problems),
    volumes: declaredVolumes,
    web: { service: x.web, port, healthPath: x['health-path'] ?? '/health' },
    database: x.database === undefined ? null : { service: x.database },
    commands,
    deadlines: {
      startMs: x['start-deadline'] ? durationMs(x['start-deadline']) : DEFAULT_DEADLINES.startMs,
      migrateMs: x['migrate-deadline'] ? durationMs(x['migrate-deadline']) : DEFAULT_DEADLINES.migrateMs,
    },
    secrets,
    initialCredentials: initialCredentials(x['initial-credentials'], secrets, problems),
  };
}

/**
 * The first login a created service gives its creator: the definition's, or login `admin` when
 * it only declares the ADMIN_PASSWORD secret; the password is always that secret. The login is
 * kept in clear in the create operation's result, so it may not name a secret; the fields are
 * sealed with the password. Only what is known when the service is created may be named: its
 * id, its name and its secrets (its url and mail relay come at its first start).
 */
function initialCredentials(
  spec: ComposeFile['x-teaminfra']['initial-credentials'], secrets: string[], problems: string[],
): InitialCredentialsTemplate | null {
  const hasPassword = secrets.includes(ADMIN_PASSWORD_SECRET);
  if (spec === undefined) return hasPassword ? { login: [{ text: ADMIN_LOGIN }], fields: {} } : null;
  if (!hasPassword) {
    problems.push(`x-teaminfra.initial-credentials gives the password of the secret ${ADMIN_PASSWORD_SECRET}, which x-teaminfra.secrets does not declare; add it there.`);
  }
  const known = (variables: readonly string[]) => (name: string) =>
    `names \${${name}}, which is not known when the service is created; it may name ${variables.join(', ')}.`;
  const inLogin = [...CREDENTIAL_VARIABLES];
  const inFields = [...CREDENTIAL_VARIABLES, ...secrets];
  return {
    login: spec.login === undefined ? [{ text: ADMIN_LOGIN }]
      : template(spec.login, 'x-teaminfra.initial-credentials.login', { variables: new Set(inLogin), problems, unknown: known(inLogin) }),
    fields: Object.fromEntries(Object.entries(spec.fields ?? {}).map(([field, value]) => [field,
      template(String(value), `x-teaminfra.initial-credentials.fields.${field}`, { variables: new Set(inFields), problems, unknown: known(inFields) })])),
  };
}

/**
 * What `depends_on` asks the driver to wait for: a container with a healthcheck is waited for
 * until healthy before the next starts, so `service_healthy` needs one in this file (an image's
 * own HEALTHCHECK is not waited for; Compose refuses the condition without one too). No service
 * runs to completion: each runs as long as the service does.
 */
function waitsAreKept(containers: AppContainer[], problems: string[]): void {
  const byName = new Map(containers.map((each) => [each.name, each]));
  for (const each of containers) {
    for (const { service, condition } of each.dependsOn) {
      const target = byName.get(service);
      if (!target || target === each) continue;
      if (condition === 'service_healthy' && !target.healthcheck) {
        problems.push(`Service "${each.name}" waits for "${service}" to be healthy (condition: service_healthy), but "${service}" has no healthcheck ` +
          `in this file; give it one (healthcheck: test: ["CMD", ...]) or wait only for its start (condition: service_started).`);
      }
      if (condition === 'service_completed_successfully') {
        problems.push(`Service "${each.name}" waits for "${service}" to complete (condition: service_completed_successfully), but teaminfra runs every ` +
          'service for as long as the service runs; a step before the app starts is x-teaminfra.commands.migrate.');
      }
    }
  }
}

interface Context { serviceNames: string[]; declaredVolumes: string[]; variables: Set<string>; problems: string[] }

function container(name: string, spec: ComposeService, context: Context): AppContainer {
  const environment: Record<string, Template> = {};
  const entries = Array.isArray(spec.environment)
    ? spec.environment.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const)
    : Object.entries(spec.environment ?? {}).map(([key, value]) => [key, value === null ? '' : String(value)] as const);
  for (const [key, value] of entries) environment[key] = template(value, `Service "${name}", environment ${key}`, context);

  const dependsOn = Array.isArray(spec.depends_on)
    ? spec.depends_on.map((service) => ({ service, condition: 'service_started' as DependencyCondition }))
    : Object.entries(spec.depends_on ?? {}).map(([service, options]) => ({ service, condition: options.condition ?? 'service_started' }));
  for (const dependency of dependsOn) {
    if (!context.serviceNames.includes(dependency.service)) context.problems.push(`Service "${name}" depends on "${dependency.service}", which is not a service of this file.`);
    if (dependency.service === name) context.problems.push(`Service "${name}" depends on itself.`);
  }

  return {
    name,
    image: spec.image,
    command: spec.command ?? null,
    environment,
    volumes: (spec.volumes ?? []).map((entry) => mount(name, entry, context)).filter((each): each is VolumeMount => each !== null),
    healthcheck: healthcheck(name, spec.healthcheck, context.problems),
    dependsOn,
    user: spec.user === undefined ? null : String(spec.user),
  };
}

/** `${NAME}` names a variable the driver fills in; `$$` is a literal `$`, as in Compose. */
function template(
  value: string, where: string, context: Pick<Context, 'variables' | 'problems'> & { unknown?: (name: string) => string },
): Template {
  const parts: TemplatePart[] = [];
  const pattern = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$/g;
  let last = 0;
  for (const match of value.matchAll(pattern)) {
    if (match.index > last) parts.push({ text: value.slice(last, match.index) });
    if (match[0] === '$$') parts.push({ text: '$' });
    else if (match[1] !== undefined) {
      if (!context.variables.has(match[1])) {
        context.problems.push(`${where} ${context.unknown?.(match[1])
          ?? `names \${${match[1]}}, which is neither a secret of x-teaminfra.secrets nor one of ${BUILT_IN_VARIABLES.join(', ')}.`}`);
      }
      parts.push({ variable: match[1] });
    } else context.problems.push(`${where} has a "$" that is not \${NAME}; write "$$" for a literal dollar sign.`);
    last = match.index + match[0].length;
  }
  if (last < value.length) parts.push({ text: value.slice(last) });
  return parts;
}

function mount(service: string, entry: string | { source: string; target: string; read_only?: boolean | undefined }, context: Context): VolumeMount | null {
  let volume: string;
  let target: string;
  let readOnly = false;
  if (typeof entry === 'string') {
    const parts = entry.split(':');
    if (parts.length < 2 || parts.length > 3 || (parts.length === 3 && !['ro', 'rw'].includes(parts[2]!))) {
      context.problems.push(`Service "${service}" mounts "${entry}": write a named volume as "name:/path" or "name:/path:ro" (anonymous volumes are not kept).`);
      return null;
    }
    [volume, target] = parts as [string, string];
    readOnly = parts[2] === 'ro';
  } else {
    ({ source: volume, target } = entry);
    readOnly = entry.read_only ?? false;
  }
  if (!target.startsWith('/')) context.problems.push(`Service "${service}" mounts "${volume}" at "${target}", which is not an absolute path.`);
  if (!context.declaredVolumes.includes(volume)) {
    context.problems.push(`Service "${service}" mounts the volume "${volume}", which the top-level "volumes" does not declare.`);
  }
  return { volume, target, readOnly };
}

function healthcheck(service: string, spec: ComposeService['healthcheck'], problems: string[]): Healthcheck | null {
  if (!spec || spec.disable) return null;
  const test = spec.test;
  if (test === undefined) return null;
  if (typeof test === 'string' || test[0] === 'CMD-SHELL') {
    problems.push(`Service "${service}" has a shell healthcheck; write it as a list, ["CMD", "program", "arg", ...], which runs without a shell.`);
    return null;
  }
  if (test[0] === 'NONE') return null;
  if (test[0] !== 'CMD' || test.length < 2) {
    problems.push(`Service "${service}" has a healthcheck test that does not start with "CMD" and a program; write ["CMD", "program", "arg", ...].`);
    return null;
  }
  return {
    test: test.slice(1),
    intervalMs: spec.interval ? durationMs(spec.interval) : 30_000,
    timeoutMs: spec.timeout ? durationMs(spec.timeout) : 30_000,
    retries: spec.retries ?? 3,
    startPeriodMs: spec.start_period ? durationMs(spec.start_period) : 0,
  };
}

function containerPort(service: string, port: number | string | { target: number }, problems: string[]): number {
  const text = typeof port === 'object' ? String(port.target) : String(port);
  const match = /^(\d+)(\/tcp)?$/.exec(text);
  const value = match ? Number(match[1]) : NaN;
  if (!match) {
    // Compose's [[ADDRESS:]HOST:]CONTAINER[/PROTOCOL]: the container's port is the last part.
    const container = /(\d+)[^:]*$/.exec(text)?.[1];
    problems.push(`Service "${service}" publishes "${text}": give only the container's port (${container === undefined ? 'one number' : `"${container}"`}); ` +
      'teaminfra chooses the address and port on the machine.');
  } else if (!(value > 0 && value < 65536)) problems.push(`Service "${service}" publishes port ${text}, which is not a TCP port.`);
  return match ? value : 0;
}

/** Containers ordered so each comes after what it depends on; a cycle is a problem. */
function startOrder(containers: AppContainer[], problems: string[]): AppContainer[] {
  const byName = new Map(containers.map((each) => [each.name, each]));
  const ordered: AppContainer[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (each: AppContainer, path: string[]): void => {
    if (state.get(each.name) === 'done') return;
    if (state.get(each.name) === 'visiting') {
      problems.push(`The services depend on each other in a cycle: ${[...path, each.name].join(' -> ')}.`);
      return;
    }
    state.set(each.name, 'visiting');
    for (const dependency of each.dependsOn) {
      const next = byName.get(dependency.service);
      if (next && next !== each) visit(next, [...path, each.name]);
    }
    state.set(each.name, 'done');
    ordered.push(each);
  };
  for (const each of containers) visit(each, []);
  return ordered;
}
