// The MCP projection of the catalog: one tool per capability (name, title, description, JSON
// Schemas, annotations from the hints). Computed once at start and frozen: registering zod-shaped
// tools costs milliseconds (DESIGN.md, "MCP"), so no request or session ever builds one.
import type { Tool } from '@modelcontextprotocol/server';
import { CatalogError, type Capability } from '../core/capability.js';
import { jsonSchemaOf } from '../channel-neutral/json-schema.js';
import { leanInputSchema, leanOutputSchema, summaryOf, vocabularyOnce } from './lean-schema.js';
import type { PrebuiltTool } from './prebuilt-tools.js';
import { withSharedPieces } from './shared-pieces.js';

/**
 * The members an answer declares over MCP where the whole would repeat another tool's schema
 * (lean-schema.ts): what a write answers (an operation, a decision) by what a model acts on next,
 * a list's items by what a model picks one by. The answer holds every member all the same, and
 * the tool that reads one (get_operation, get_decision, get_erp_service...) declares all of them.
 */
const WRITE_MEMBERS = ['id', 'state', 'reason', 'answer'];
const ITEM_MEMBERS = ['id', 'name', 'kind', 'state', 'service_id', 'subject', 'question'];

export interface ToolDefinition {
  readonly capability: Capability;
  /** Exactly what tools/list sends for this capability (MCP 2026-07-28, and the snapshot). */
  readonly tool: Tool;
  /**
   * What tools/list sends on 2025-11-25 and older: the same, plus `execution.taskSupport:
   * "optional"` on a tool that can answer with a task, which a client of that era must see
   * before it asks for one. 2026-07-28 has no such field: the tasks extension is per request.
   */
  readonly legacyTool: Tool;
}

/**
 * A capability whose call can be followed as a task (long-actions.ts): an action that queues an
 * operation (202), or asking a decision (what decisions:request creates, 201), which stays
 * pending until a person answers.
 */
export function startsLongAction(capability: Capability): boolean {
  return capability.http.status === 202 || (capability.permission === 'decisions:request' && capability.http.status === 201);
}

export interface ToolCatalog {
  readonly definitions: readonly ToolDefinition[];
  find(name: string): ToolDefinition | undefined;
}

/**
 * `prebuilt`: the tools as the build computed them from this same catalog (prebuilt-tools.ts),
 * used when they name the same capabilities in the same order, else computed here.
 */
export function buildToolCatalog(catalog: readonly Capability[], prebuilt?: readonly PrebuiltTool[]): ToolCatalog {
  const usable = prebuilt !== undefined && prebuilt.length === catalog.length && prebuilt.every((entry, index) => entry.name === catalog[index]!.name);
  const vocabularies = new Set<string>();
  const definitions = catalog.map((capability, index): ToolDefinition => {
    if (usable) return Object.freeze({ capability, tool: deepFreeze(prebuilt[index]!.tool), legacyTool: deepFreeze(prebuilt[index]!.legacyTool) });
    const tool = toolOf(capability, vocabularies);
    const legacyTool = startsLongAction(capability) ? deepFreeze({ ...tool, execution: { taskSupport: 'optional' } } as Tool) : tool;
    return Object.freeze({ capability, tool, legacyTool });
  });
  const byName = new Map(definitions.map((definition) => [definition.capability.name, definition]));
  if (byName.size !== definitions.length) throw new CatalogError('Two capabilities share an MCP tool name.');
  return Object.freeze({ definitions: Object.freeze(definitions), find: (name: string) => byName.get(name) });
}

function toolOf(capability: Capability, vocabularies: Set<string>): Tool {
  const annotations = annotationsOf(capability);
  return deepFreeze({
    name: capability.name,
    title: capability.title,
    description: capability.description,
    inputSchema: leanInputSchema(objectSchema(capability, 'input')) as Tool['inputSchema'],
    outputSchema: outputSchemaOf(capability, vocabularies),
    // No hint differs from the default (a destructive write that is not idempotent): no annotations.
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  });
}

function outputSchemaOf(capability: Capability, vocabularies: Set<string>): Tool['outputSchema'] {
  const lean = leanOutputSchema(objectSchema(capability, 'output'));
  const declared = !capability.hints.readOnly && isResource(lean) ? summaryOf(lean, WRITE_MEMBERS) : itemsSummarized(lean, vocabularies);
  return withSharedPieces(vocabularyOnce(declared, vocabularies)) as Tool['outputSchema'];
}

/** An answer that is one resource with a life of its own (an id and a state), which another tool reads whole. */
function isResource(schema: Record<string, unknown>): boolean {
  const properties = schema.properties as Record<string, unknown> | undefined;
  return properties !== undefined && 'id' in properties && 'state' in properties;
}

/**
 * A page (`data` and `next_cursor`) declares its items by ITEM_MEMBERS, and its next_cursor only
 * if it is the catalog's first page (the later ones name it); any other answer, whole.
 */
function itemsSummarized(schema: Record<string, unknown>, declared: Set<string>): Record<string, unknown> {
  const properties = schema.properties as Record<string, { type?: unknown; items?: Record<string, unknown> }> | undefined;
  const data = properties?.data;
  if (!data || !data.items || !('next_cursor' in properties)) return schema;
  if (!('id' in ((data.items.properties ?? {}) as object))) return schema;
  const cursor = declared.has(PAGE_CURSOR) ? {} : properties.next_cursor;
  declared.add(PAGE_CURSOR);
  return { ...schema, properties: { ...properties, data: { ...data, items: summaryOf(data.items, ITEM_MEMBERS) }, next_cursor: cursor } };
}

/** What `declared` holds once a page declared its next_cursor. */
const PAGE_CURSOR = 'page:next_cursor';

/**
 * The hints, each stated only where it differs from the MCP default (readOnly false, destructive
 * true, idempotent false) or where the default would mislead: destructive and idempotent mean
 * something only for a tool that writes. The title is the tool's own `title`.
 *
 * openWorldHint is left out, though every capability of the catalog declares itself closed-world
 * (hints.openWorld false): `"openWorldHint":false` is 21 bytes on each of 35 tools, and tools/list
 * had to come under 24 KB (src/mcp/README.md, "A lean tool list"). A model does not read it; a
 * client reads the default, an open world, which can only make it more careful than it need be.
 */
export function annotationsOf(capability: Capability): NonNullable<Tool['annotations']> {
  const { readOnly, destructive, idempotent } = capability.hints;
  const annotations: NonNullable<Tool['annotations']> = {};
  if (readOnly) annotations.readOnlyHint = true;
  if (!readOnly && !destructive) annotations.destructiveHint = false;
  if (!readOnly && idempotent) annotations.idempotentHint = true;
  return annotations;
}

/** MCP requires both schemas to be JSON objects at the root; a capability that is not is refused at load. */
function objectSchema(capability: Capability, io: 'input' | 'output'): Tool['inputSchema'] {
  const schema = jsonSchemaOf(io === 'input' ? capability.input : capability.output, io);
  if (schema.type !== 'object') {
    throw new CatalogError(`Capability ${capability.name}: its ${io} must be a JSON object to be an MCP tool.`);
  }
  return schema as Tool['inputSchema'];
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
