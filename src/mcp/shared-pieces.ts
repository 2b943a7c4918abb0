// A piece an output schema repeats is written once, under `$defs`, and referenced wherever it
// recurs: JSON Schema 2020-12's own way to share, which the validators clients check
// structuredContent with resolve (the SDK client's Ajv2020, Python's jsonschema). The piece that
// pays is a nullable field, kept in anyOf form (MCP Inspector's strict check flags type arrays):
// `{"anyOf":[{"type":"string"},{"type":"null"}]}` is 45 bytes, `{"$ref":"#/$defs/s"}` 20, so an
// answer with ten nullable strings (an operation) says "string or null" once instead of ten times.
// A piece is shared only where that makes the schema shorter, so a schema that repeats nothing is
// returned as it was; the names are short because every byte of tools/list is read by a model
// before the first question, and the definition they name sits in the same schema.
type JsonSchema = Record<string, unknown>;

const refTo = (name: string) => ({ $ref: `#/$defs/${name}` });
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

export function withSharedPieces(schema: JsonSchema): JsonSchema {
  const counts = new Map<string, number>();
  forEachSubschema(schema, (node) => {
    const key = JSON.stringify(node);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  const candidates = [...counts].filter(([, count]) => count > 1)
    .sort(([a, countA], [b, countB]) => countB * b.length - countA * a.length);
  let best = schema;
  const defs: JsonSchema = {};
  for (const [key] of candidates) {
    const name = nameOf(JSON.parse(key) as JsonSchema, defs);
    const piece = JSON.parse(key) as unknown;
    const trial = { ...replaced(withoutDefs(best), key, refTo(name)) as JsonSchema, $defs: { ...defs, [name]: piece } };
    if (bytesOf(trial) < bytesOf(best)) {
      defs[name] = piece;
      best = trial;
    }
  }
  return best;
}

/**
 * A nullable piece by the initial of its type ("s" a string or null, "n" a number or null, "a"
 * an array or null...), any other piece "p"; a digit after it when the letter is taken.
 */
function nameOf(piece: JsonSchema, taken: JsonSchema): string {
  const branches = piece.anyOf as JsonSchema[] | undefined;
  const nullable = branches?.length === 2 && JSON.stringify(branches[1]) === '{"type":"null"}' ? branches[0]!.type : undefined;
  const wanted = typeof nullable === 'string' ? nullable[0]! : 'p';
  if (!(wanted in taken)) return wanted;
  let index = 2;
  while (`${wanted}${index}` in taken) index += 1;
  return `${wanted}${index}`;
}

function withoutDefs(schema: JsonSchema): JsonSchema {
  const { $defs: _defs, ...rest } = schema;
  return rest;
}

/** Calls visit on every subschema below the root: properties' values, items, anyOf's branches. */
function forEachSubschema(schema: unknown, visit: (node: JsonSchema) => void): void {
  for (const child of childrenOf(schema)) {
    visit(child);
    forEachSubschema(child, visit);
  }
}

function childrenOf(schema: unknown): JsonSchema[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as JsonSchema;
  const children: JsonSchema[] = [];
  if (node.properties) children.push(...(Object.values(node.properties) as JsonSchema[]));
  if (node.items && typeof node.items === 'object') children.push(node.items as JsonSchema);
  if (Array.isArray(node.anyOf)) children.push(...(node.anyOf as JsonSchema[]));
  return children;
}

/** The schema with every subschema equal to `key` (below the root) replaced by `by`. */
function replaced(schema: JsonSchema, key: string, by: JsonSchema): JsonSchema {
  const swap = (child: unknown) => (JSON.stringify(child) === key ? by : replaced(child as JsonSchema, key, by));
  const node: JsonSchema = { ...schema };
  if (schema.properties) {
    node.properties = Object.fromEntries(Object.entries(schema.properties as JsonSchema).map(([name, child]) => [name, swap(child)]));
  }
  if (schema.items && typeof schema.items === 'object') node.items = swap(schema.items);
  if (Array.isArray(schema.anyOf)) node.anyOf = schema.anyOf.map(swap);
  return node;
}
