// Nullable fields written as `anyOf: [<the type>, {"type": "null"}]` instead of the type array
// zod emits for a nullable primitive (`"type": ["string", "null"]`). Both mean the same in JSON
// Schema 2020-12, but MCP Inspector's --strict check flags every type array as not portable
// (99 warnings on our output schemas), and some clients' schema converters take the first type
// only; anyOf is accepted by the SDK clients (1.x and 2.x) and by the OpenAPI tools alike.
type JsonSchema = Record<string, unknown>;

/** Keywords that describe the field itself: they stay beside anyOf, the rest go into the non-null branch. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', '$comment']);

/** Keywords whose value is data, not a schema: never rewritten. */
const VALUES = new Set(['enum', 'const', 'examples', 'default']);

export function nullableAsAnyOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableAsAnyOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  const node: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) node[key] = VALUES.has(key) ? value : nullableAsAnyOf(value);
  const types = node.type;
  if (!Array.isArray(types) || !types.includes('null')) return node;
  const others = types.filter((type) => type !== 'null');
  const outer: JsonSchema = {};
  const branch: JsonSchema = { type: others.length === 1 ? others[0] : others };
  for (const [key, value] of Object.entries(node)) {
    if (key === 'type') continue;
    if (ANNOTATIONS.has(key)) outer[key] = value;
    else branch[key] = key === 'enum' && Array.isArray(value) ? value.filter((entry) => entry !== null) : value;
  }
  return { ...outer, anyOf: [branch, { type: 'null' }] };
}
