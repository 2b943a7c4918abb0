// A Compose file's text to the typed model, in compose-go's three steps: parse the YAML, refuse
// what teaminfra does not run and validate the rest (zod), build the model. YAML is read by
// `yaml` (eemeli/yaml): maintained, no dependencies, YAML 1.2 (so `no` and `on` stay strings,
// as in Compose), errors with line and column, duplicate keys refused, and a cap on alias
// expansion so a small file cannot expand into gigabytes ("billion laughs").
// It is required on the first parse, not imported: every tools/ module that creates a service
// reaches this file, and loading `yaml` (about 30 ms) would delay `teaminfra mcp`'s first answer.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import type { AppDefinition } from './app-definition.js';
import { buildAppDefinition } from './build-app-definition.js';
import { refusalsOf } from './compose-refusals.js';
import { APP_NAME, composeSchemas, knownKeysAt } from './compose-schema.js';
import { nearestKey } from './nearest-key.js';

/** A definition refused: `problems` holds one sentence per problem, for a person to act on. */
export class AppDefinitionError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join(' '));
  }
}

const MAX_BYTES = 256 * 1024;

let yaml: typeof Yaml | undefined;
const parseDocument: typeof Yaml.parseDocument = (...args) => (yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml).parseDocument(...args);

/** `name` (the operator's --name) wins over the file's top-level `name`. */
export function parseAppDefinition(text: string, name?: string): AppDefinition {
  if (Buffer.byteLength(text) > MAX_BYTES) throw new AppDefinitionError([`The file is larger than ${MAX_BYTES / 1024} KB; an app definition is a short Compose file.`]);
  const document = parseDocument(text, { merge: true, uniqueKeys: true, prettyErrors: true, version: '1.2' });
  if (document.errors.length > 0) {
    throw new AppDefinitionError(document.errors.map((error) => `The file is not valid YAML: ${error.message.split('\n')[0]}`));
  }
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new AppDefinitionError([`The file cannot be read as YAML: ${(error as Error).message}`]);
  }

  const refusals = refusalsOf(raw);
  if (refusals.length > 0) throw new AppDefinitionError(refusals);

  const checked = composeSchemas().ComposeFile.safeParse(raw);
  if (!checked.success) throw new AppDefinitionError(checked.error.issues.flatMap((issue) => sentencesOf(issue, raw)));

  const problems: string[] = [];
  const appName = name ?? checked.data.name;
  if (appName === undefined) problems.push('The definition has no name: give the file a top-level "name" or pass --name.');
  else if (!APP_NAME.test(appName)) problems.push(`The name "${appName}" must be lower-case letters, digits and dashes, starting with a letter (at most 40).`);
  const definition = buildAppDefinition(checked.data, appName ?? '', problems);
  if (problems.length > 0) throw new AppDefinitionError(problems);
  return definition;
}

function sentencesOf(issue: z.core.$ZodIssue, raw: unknown): string[] {
  const where = issue.path.length === 0 ? 'The file' : pathText(issue.path);
  const given = issue.path.reduce<unknown>((value, key) => (value as Record<PropertyKey, unknown> | undefined)?.[key], raw);
  if (given === undefined) return [`${where} is required.`];
  if (issue.code === 'unrecognized_keys') {
    // A typo is named with the key it was meant to be; the others are to be removed.
    const known = knownKeysAt(issue.path).filter((key) => !(key in (given as object)));
    const typos = issue.keys.map((key) => ({ key, nearest: nearestKey(key, known) })).filter((each) => each.nearest !== null);
    const unknown = issue.keys.filter((key) => !typos.some((typo) => typo.key === key));
    return [
      ...typos.map(({ key, nearest }) => `${where} has the key "${key}", which teaminfra does not know; did you mean "${nearest}"?`),
      ...(unknown.length > 0 ? [`${where} has keys teaminfra does not know: ${unknown.join(', ')}; remove them.`] : []),
    ];
  }
  if (issue.code === 'invalid_key') {
    // A name of a mapping (a service's, a field's): the rule it breaks is its own issue's message.
    const parent = issue.path.slice(0, -1);
    return [`The name "${String(issue.path.at(-1))}" in ${parent.length === 0 ? 'the file' : `"${parent.map(String).join('.')}"`} ` +
      `${issue.issues[0]?.message ?? 'is not valid'}.`];
  }
  return [`${where} ${issue.message.replace(/^Invalid input: /, 'is invalid: ')}.`.replace(/\.\.$/, '.')];
}

/** `services.tryton.environment` reads as: Service "tryton", key "environment". */
function pathText(path: PropertyKey[]): string {
  const [first, second, ...rest] = path.map(String);
  if (first === 'services' && second !== undefined) {
    return rest.length === 0 ? `Service "${second}"` : `Service "${second}", key "${rest.join('.')}",`;
  }
  return `"${path.map(String).join('.')}"`;
}
