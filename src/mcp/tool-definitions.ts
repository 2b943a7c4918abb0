// The MCP projection of the catalog: one tool per capability (name, title, description, JSON
// Schemas, annotations from the hints). Computed once at start and frozen: registering zod-shaped
// tools costs milliseconds (DESIGN.md, "MCP"), so no request or session ever builds one.
import type { Tool } from '@modelcontextprotocol/server';
import { CatalogError, type Capability } from '../core/capability.js';
import { jsonSchemaOf } from '../channel-neutral/json-schema.js';

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

export function buildToolCatalog(catalog: readonly Capability[]): ToolCatalog {
  const definitions = catalog.map((capability): ToolDefinition => {
    const tool = toolOf(capability);
    const legacyTool = startsLongAction(capability) ? deepFreeze({ ...tool, execution: { taskSupport: 'optional' } } as Tool) : tool;
    return Object.freeze({ capability, tool, legacyTool });
  });
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
