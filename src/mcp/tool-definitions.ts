// The MCP projection of the catalog: one tool per capability (name, title, description, JSON
// Schemas, annotations from the hints). Computed once at start and frozen: registering zod-shaped
// tools costs milliseconds (DESIGN.md, "MCP"), so no request or session ever builds one.
import type { Tool } from '@modelcontextprotocol/server';
import { CatalogError, type Capability } from '../core/capability.js';
import { jsonSchemaOf } from '../http/openapi.js';

export interface ToolDefinition {
  readonly capability: Capability;
  /** Exactly what tools/list sends for this capability. */
  readonly tool: Tool;
}

export interface ToolCatalog {
  readonly definitions: readonly ToolDefinition[];
  find(name: string): ToolDefinition | undefined;
}

export function buildToolCatalog(catalog: readonly Capability[]): ToolCatalog {
  const definitions = catalog.map((capability): ToolDefinition => Object.freeze({ capability, tool: toolOf(capability) }));
  const byName = new Map(definitions.map((definition) => [definition.capability.name, definition]));
  if (byName.size !== definitions.length) throw new CatalogError('Two capabilities share an MCP tool name.');
  return Object.freeze({ definitions: Object.freeze(definitions), find: (name: string) => byName.get(name) });
}

function toolOf(capability: Capability): Tool {
  return deepFreeze({
    name: capability.name,
    title: capability.title,
    description: capability.description,
    inputSchema: objectSchema(capability, 'input'),
    outputSchema: objectSchema(capability, 'output'),
    annotations: {
      title: capability.title,
      readOnlyHint: capability.hints.readOnly,
      destructiveHint: capability.hints.destructive,
      idempotentHint: capability.hints.idempotent,
      openWorldHint: capability.hints.openWorld,
    },
  });
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
