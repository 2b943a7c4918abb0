// The shape of the Compose subset teaminfra runs, as zod schemas: what passes here has the
// right types; build-app-definition.ts then checks what refers to what and builds the model.
// Keys outside the subset never reach these schemas (compose-refusals.ts refuses them by name
// first); `.strict()` stays as the second lock.
import { z } from 'zod';
import { COMMAND_NAMES } from './app-definition.js';

const DURATION = /^(\d+(\.\d+)?(us|ms|s|m|h))+$/;

/** A Compose duration (`90s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d+)?)(us|ms|s|m|h)/g)) total += Number(amount) * (units[unit as string] ?? 0);
  return Math.round(total);
}

const NAME = /^[a-z][a-z0-9-]{0,39}$/;
const SECRET = /^[A-Z][A-Z0-9_]{0,63}$/;
const FIELD = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * The schemas, built on the first parse rather than at load: the catalog's create tools reach this
 * file, and building them is a few ms of every `teaminfra mcp` start that reads no app definition.
 */
function buildSchemas() {
  const Duration = z.string().regex(DURATION, 'must be a duration such as "30s" or "1m30s"');

  /** An argument array; a string would have to be split by a shell's rules, which we never apply. */
  const Argv = z.array(z.string(), { error: 'must be a list of arguments, such as ["pg_dump", "-Fc"], not one string' }).min(1);

  const Scalar = z.union([z.string(), z.number(), z.boolean()]);

  const Environment = z.union([
    z.record(z.string(), Scalar.nullable()),
    z.array(z.string().regex(/^[^=\s]+=/, 'must be written KEY=value')),
  ]);

  const VolumeEntry = z.union([
    z.string(),
    z.object({
      type: z.literal('volume', { error: 'must be "volume": teaminfra mounts named volumes only' }),
      source: z.string().min(1),
      target: z.string().min(1),
      read_only: z.boolean().optional(),
    }).strict(),
  ]);

  const Healthcheck = z.object({
    test: z.union([z.array(z.string()).min(1), z.string()]).optional(),
    interval: Duration.optional(),
    timeout: Duration.optional(),
    retries: z.number().int().min(0).optional(),
    start_period: Duration.optional(),
    disable: z.boolean().optional(),
  }).strict();

  const Condition = z.enum(['service_started', 'service_healthy', 'service_completed_successfully']);

  const DependsOn = z.union([
    z.array(z.string()),
    z.record(z.string(), z.object({ condition: Condition.optional(), required: z.boolean().optional() }).strict()),
  ]);

  const Port = z.union([
    z.number().int(),
    z.string(),
    z.object({ target: z.number().int(), protocol: z.literal('tcp').optional() }).strict(),
  ]);

  const ComposeService = z.object({
    image: z.string({ error: 'is required: teaminfra runs images, it does not build them' }).min(1),
    command: Argv.optional(),
    environment: Environment.optional(),
    volumes: z.array(VolumeEntry).optional(),
    healthcheck: Healthcheck.optional(),
    depends_on: DependsOn.optional(),
    user: z.union([z.string().min(1), z.number().int()]).optional(),
    ports: z.array(Port).optional(),
  }).strict();

  const CommandEntry = z.object({ service: z.string().min(1), command: Argv, user: z.string().min(1).optional() }).strict();

  const TeaminfraKeys = z.object({
    web: z.string().min(1),
    'health-path': z.string().regex(/^\/\S*$/, 'must be a path starting with /').optional(),
    database: z.string().min(1).optional(),
    'start-deadline': Duration.optional(),
    'migrate-deadline': Duration.optional(),
    secrets: z.array(z.string().regex(SECRET, 'must be an upper-case name such as DB_PASSWORD')).optional(),
    'initial-credentials': z.object({
      login: z.string().min(1).optional(),
      fields: z.record(z.string().regex(FIELD, 'must be a lower-case name such as company'), z.union([z.string(), z.number()])).optional(),
    }).strict().optional(),
    commands: z.object(Object.fromEntries(COMMAND_NAMES.map((name) => [name, CommandEntry.optional()])) as
      Record<(typeof COMMAND_NAMES)[number], z.ZodOptional<typeof CommandEntry>>).strict().optional(),
  }).strict();

  const ComposeFile = z.object({
    name: z.string().regex(NAME, 'must be lower-case letters, digits and dashes, starting with a letter (at most 40)').optional(),
    // Obsolete in the Compose specification and ignored by Compose itself; accepted for the files that still carry it.
    version: z.union([z.string(), z.number()]).optional(),
    services: z.record(z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'must be a lower-case service name'), ComposeService)
      .refine((services) => Object.keys(services).length > 0, 'must name at least one service'),
    volumes: z.record(z.string(), z.union([z.null(), z.object({}).strict()])).optional(),
    'x-teaminfra': TeaminfraKeys,
  }).loose();
  return { ComposeService, ComposeFile };
}

let schemas: ReturnType<typeof buildSchemas> | undefined;
export function composeSchemas(): ReturnType<typeof buildSchemas> {
  return (schemas ??= buildSchemas());
}

/**
 * The keys the schema knows at `path` of a file (several shapes where a union allows them): what
 * an unknown key there was most likely meant to be is one of these.
 */
export function knownKeysAt(path: readonly PropertyKey[]): string[] {
  let reached: z.ZodType[] = [composeSchemas().ComposeFile];
  for (const key of path) {
    reached = reached.flatMap(shapesOf).flatMap((schema) => {
      const def = schema.def as unknown as { type: string; shape?: Record<string, z.ZodType>; valueType?: z.ZodType; element?: z.ZodType };
      if (def.type === 'object') return def.shape?.[String(key)] ? [def.shape[String(key)]!] : [];
      if (def.type === 'record') return def.valueType ? [def.valueType] : [];
      return def.type === 'array' && typeof key === 'number' && def.element ? [def.element] : [];
    });
  }
  return [...new Set(reached.flatMap(shapesOf).flatMap((schema) => {
    const def = schema.def as unknown as { type: string; shape?: Record<string, z.ZodType> };
    return def.type === 'object' ? Object.keys(def.shape ?? {}) : [];
  }))];
}

/** The schemas a value may match: an optional or nullable one's inner schema, each option of a union. */
function shapesOf(schema: z.ZodType): z.ZodType[] {
  const def = schema.def as unknown as { type: string; innerType?: z.ZodType; options?: z.ZodType[] };
  if ((def.type === 'optional' || def.type === 'nullable') && def.innerType) return shapesOf(def.innerType);
  if (def.type === 'union' && def.options) return def.options.flatMap(shapesOf);
  return [schema];
}

export type ComposeFile = z.infer<ReturnType<typeof buildSchemas>['ComposeFile']>;
export type ComposeService = z.infer<ReturnType<typeof buildSchemas>['ComposeService']>;

export const APP_NAME = NAME;
