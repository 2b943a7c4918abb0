// What tools/list says about a tool's answer: its shape, in as few bytes as say it. tools/list
// lands in the model's context before the first question, once per conversation, so every byte
// of it is paid for by every conversation (README.md, "A lean tool list"). The OpenAPI document
// keeps the whole schema (descriptions, patterns, required fields); this projection keeps what a
// client validates `structuredContent` with and what a model plans the next call from: property
// names, types, enums, nullability, arrays and nested objects.
// A schema that declares fewer constraints accepts more, never less: every answer the full
// schema accepts, the lean one accepts too (test/mcp/lean-schema.test.ts checks it on answers).
type JsonSchema = Record<string, unknown>;

/** Keywords that carry a shape; every other keyword (description, pattern, required, additionalProperties, bounds) is left out. */
const SHAPE = new Set(['type', 'properties', 'items', 'anyOf', 'enum', 'const']);

export function leanOutputSchema(schema: JsonSchema): JsonSchema {
  return leanNode(schema, true) as JsonSchema;
}

function leanNode(schema: unknown, root = false): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const node: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SHAPE.has(key)) continue;
    if (key === 'properties') {
      node.properties = Object.fromEntries(Object.entries(value as JsonSchema).map(([name, inner]) => [name, leanNode(inner)]));
    } else if (key === 'items') {
      node.items = leanNode(value);
    } else if (key === 'anyOf') {
      node.anyOf = (value as unknown[]).map((inner) => leanNode(inner));
    } else {
      node[key] = value;
    }
  }
  // An enum names its values: its type says nothing more. A long one (the permissions) is a
  // vocabulary the answer itself shows; its type is enough to plan with.
  if (Array.isArray(node.enum) && node.enum.length > MAX_OUTPUT_ENUM) return { type: typeof node.enum[0] };
  if (node.enum !== undefined && typeof node.type === 'string') delete node.type;
  // Below the root (which MCP requires to say "object"), `properties` says an object and `items`
  // an array: their type says nothing more to a model, and a validator accepts more without it.
  if (!root && ((node.type === 'object' && node.properties) || (node.type === 'array' && node.items))) delete node.type;
  return node;
}

const MAX_OUTPUT_ENUM = 10;

/**
 * An input schema as tools/list shows it: the zod input's JSON Schema without what the server
 * checks anyway and a model never needs to plan a call: the patterns of ids
 * (`^svc_[0-9a-z]{20}$`, about 30 bytes each: ids come from other answers) and the lengths of
 * strings (names, cursors, times: far beyond what a model sends). Each is refused with a
 * sentence that says what was wrong, as before; so is an argument the schema does not name, so
 * `additionalProperties: false` (28 bytes a tool, a kilobyte of the list) is left out too: a
 * model calls with the properties it is shown, and one it invents is refused all the same
 * (test/e2e/mcp-bad-input). Enums, numeric bounds, defaults, patterns of values a model writes
 * itself (a time of day) and `required` stay; a long pattern (an ISO 8601 time's, 86 bytes) only
 * where the field does not say its form in words.
 */
export function leanInputSchema(schema: JsonSchema): JsonSchema {
  return withoutCheckedOnly(schema) as JsonSchema;
}

const ID_PATTERN = /^\^[a-z]+_\[0-9a-z\]\{20\}\$$/;
const CHECKED_ONLY = new Set(['maxLength', 'minLength']);
const LONG_PATTERN = 40;

function withoutCheckedOnly(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  if (Array.isArray(schema)) return schema.map(withoutCheckedOnly);
  const node: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' && typeof value === 'string' && ID_PATTERN.test(value)) continue;
    if (CHECKED_ONLY.has(key) && typeof value !== 'object') continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'pattern' && typeof value === 'string' && value.length > LONG_PATTERN && typeof (schema as JsonSchema).description === 'string') continue;
    node[key] = key === 'enum' || key === 'default' || key === 'required' ? value : withoutCheckedOnly(value);
  }
  return node;
}

/**
 * A long action's answer over MCP, declared by the members a model acts on (what to poll, what
 * it waits for, what it created), and a page's items by what a model picks one by; the rest of
 * the resource is in the answer all the same. The members are named without their types: the
 * tool that reads the resource whole (get_operation, get_decision, get_erp_service...) declares
 * them, once for the catalog, instead of again in every write and every list (about 1 KB of
 * tools/list). `{}` accepts any value, so the answer still validates; not
 * `additionalProperties: false`, for the same reason.
 */
export function summaryOf(schema: JsonSchema, members: readonly string[]): JsonSchema {
  const properties = (schema.properties ?? {}) as JsonSchema;
  return { ...schema, properties: Object.fromEntries(members.filter((name) => name in properties).map((name) => [name, {}])) };
}

/**
 * A long vocabulary (an enum of five strings or more: a service's states) as its type alone in
 * every answer but the first that declares it in the catalog (get_erp_service, before the
 * metrics), and so is a large nested piece met again (a service's domains with their
 * certificates, declared by get_erp_service, then by add_service_domain's and
 * remove_service_domain's answers; a mail relay): tools/list is one document to a model, which
 * reads the values and members once. A whole answer met again (a write answering what a read
 * declared) names its members without their types. `$defs` cannot share across tools (each
 * schema is its own document), so this is the catalog's sharing. `declared` holds the pieces met
 * so far, in catalog order.
 */
export function vocabularyOnce(schema: JsonSchema, declared: Set<string>): JsonSchema {
  return onceNode(schema, declared, true) as JsonSchema;
}

const LONG_VOCABULARY = 5;
/** A nested piece is large from this many bytes: a page's summarized items (about 110) stay whole. */
const LARGE_PIECE = 150;

function onceNode(schema: unknown, declared: Set<string>, root = false): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const node = schema as JsonSchema;
  if (Array.isArray(node.enum) && node.enum.length >= LONG_VOCABULARY && node.enum.every((value) => typeof value === 'string')) {
    const key = JSON.stringify(node.enum);
    if (declared.has(key)) return { type: 'string' };
    declared.add(key);
    return node;
  }
  const key = JSON.stringify(node);
  if (key.length >= LARGE_PIECE) {
    // A whole answer met again (set_backup_schedule answers the schedule get_backup_schedule declared) names its members.
    if (declared.has(key)) return root ? summaryOf(node, Object.keys((node.properties ?? {}) as JsonSchema)) : typeAlone(node);
    declared.add(key);
  }
  const copy: JsonSchema = { ...node };
  if (node.properties) {
    copy.properties = Object.fromEntries(Object.entries(node.properties as JsonSchema).map(([name, inner]) => [name, onceNode(inner, declared)]));
  }
  if (node.items) copy.items = onceNode(node.items, declared);
  if (Array.isArray(node.anyOf)) copy.anyOf = node.anyOf.map((inner) => onceNode(inner, declared));
  return copy;
}

/** A piece declared before, by its type: an array, an object, or either or null. */
function typeAlone(node: JsonSchema): JsonSchema {
  if (Array.isArray(node.anyOf)) return { anyOf: (node.anyOf as JsonSchema[]).map((inner) => typeAlone(inner)) };
  if (node.properties) return { type: 'object' };
  if (node.items) return { type: 'array' };
  return typeof node.type === 'string' ? { type: node.type } : {};
}
