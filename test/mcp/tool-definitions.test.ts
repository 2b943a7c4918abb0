// The MCP projection of the catalog: built once, frozen, one tool per capability, and the
// public surface (tools/list as a full-access token sees it) snapshotted like the OpenAPI doc.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { CatalogError, defineCapability, type Capability } from '../../src/core/capability.js';
import { jsonSchemaOf } from '../../src/channel-neutral/json-schema.js';
import { annotationsOf, buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { leanInputSchema, leanOutputSchema, vocabularyOnce } from '../../src/mcp/lean-schema.js';
import { catalog } from '../../tools/index.js';

describe('buildToolCatalog', () => {
  const tools = buildToolCatalog(catalog);

  it('makes one tool per capability, named, titled and described as the capability', () => {
    expect(tools.definitions.map((definition) => definition.tool.name)).toEqual(catalog.map((capability) => capability.name));
    for (const { capability, tool } of tools.definitions) {
      expect(tool).toMatchObject({ name: capability.name, title: capability.title, description: capability.description });
      expect(tools.find(capability.name)?.capability).toBe(capability);
    }
  });

  it('gives each tool the lean JSON Schemas of its zod input and output, and annotations from its hints', () => {
    const vocabularies = new Set<string>();
    for (const { capability, tool } of tools.definitions) {
      expect(tool.inputSchema).toEqual(leanInputSchema(jsonSchemaOf(capability.input, 'input')));
      expect(tool.annotations ?? {}).toEqual(annotationsOf(capability));
      if (capability.hints.readOnly && !Object.keys(tool.outputSchema?.properties ?? {}).includes('next_cursor')) {
        const lean = vocabularyOnce(leanOutputSchema(jsonSchemaOf(capability.output, 'output')), vocabularies);
        expect(inlined(tool.outputSchema!), capability.name).toEqual(lean);
      }
    }
  });

  it('declares a long vocabulary once: a service\'s states in get_erp_service, not again in its metrics', () => {
    const states = (name: string) => (tools.find(name)!.tool.outputSchema!.properties as Record<string, object>).state;
    expect(states('get_erp_service')).toMatchObject({ enum: expect.arrayContaining(['running', 'stopped', 'failed']) });
    expect(states('get_erp_service_metrics')).toEqual({ type: 'string' });
  });

  it('states each hint only where it differs from the MCP default, openWorldHint never (README, "A lean tool list")', () => {
    const read = tools.find('list_erp_services')!.tool.annotations;
    expect(read).toEqual({ readOnlyHint: true });
    expect(tools.find('delete_erp_service')!.tool.annotations).toEqual({ idempotentHint: true });
    expect(tools.find('start_erp_service')!.tool.annotations).toEqual({ destructiveHint: false, idempotentHint: true });
    expect(tools.find('restore_backup')!.tool.annotations).toBeUndefined();
  });

  it('declares what a write answers by the members a model acts on next, and a list\'s items by what one is picked by', () => {
    const start = tools.find('start_erp_service')!.tool.outputSchema!;
    expect(Object.keys(start.properties!)).toEqual(['id', 'state', 'reason']);
    const list = tools.find('list_erp_services')!.tool.outputSchema!;
    const items = (list.properties as Record<string, { items: { properties: object } }>).data!.items;
    expect(Object.keys(items.properties)).toEqual(['id', 'name', 'state']);
    const get = tools.find('get_operation')!.tool.outputSchema!;
    expect(Object.keys(get.properties!)).toContain('finished_at');
  });

  it('leaves additionalProperties out of every input schema, while the zod input still refuses an unknown argument', () => {
    for (const { capability, tool } of tools.definitions) {
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain('additionalProperties');
      const issues = capability.input.safeParse({ invented: 1 }).error?.issues ?? [];
      expect(issues.map((issue) => issue.code), tool.name).toContain('unrecognized_keys');
    }
  });

  it('freezes the tools, so no request can change what the next one is shown', () => {
    const [first] = tools.definitions;
    expect(Object.isFrozen(first!.tool)).toBe(true);
    expect(Object.isFrozen(first!.tool.inputSchema)).toBe(true);
    expect(() => { (first!.tool as { name: string }).name = 'renamed'; }).toThrow(TypeError);
  });

  it('marks, for 2025-era clients only, the tools that can answer with a task: long actions and asking a decision', () => {
    const taskable = tools.definitions.filter((definition) => definition.legacyTool.execution !== undefined).map((d) => d.tool.name).sort();
    expect(taskable).toEqual(['create_backup', 'create_copy', 'create_erp_service', 'create_server', 'delete_erp_service',
      'move_erp_service', 'recover_erp_service', 'redeploy_erp_service', 'request_decision', 'restore_backup', 'rollback_erp_service_move',
      'start_erp_service', 'stop_erp_service']);
    for (const definition of tools.definitions) {
      expect(definition.tool.execution).toBeUndefined();
      if (definition.legacyTool !== definition.tool) expect(definition.legacyTool).toEqual({ ...definition.tool, execution: { taskSupport: 'optional' } });
    }
  });

  it('takes the tools the build computed when they name the same capabilities in the same order, and computes them otherwise', () => {
    const prebuilt = tools.definitions.map(({ capability, tool, legacyTool }) => ({ name: capability.name, tool: structuredClone(tool), legacyTool: structuredClone(legacyTool) }));
    const taken = buildToolCatalog(catalog, prebuilt);
    expect(taken.definitions.map((definition) => definition.tool)).toEqual(tools.definitions.map((definition) => definition.tool));
    expect(taken.definitions[0]!.tool).toBe(prebuilt[0]!.tool);
    expect(Object.isFrozen(prebuilt[0]!.tool.inputSchema)).toBe(true);
    expect(taken.find(catalog[0]!.name)?.capability).toBe(catalog[0]);
    // Another catalog (a capability added since the build): the prebuilt list is not used.
    const stale = buildToolCatalog(catalog, prebuilt.slice(1));
    expect(stale.definitions[1]!.tool).not.toBe(prebuilt[0]!.tool);
    expect(stale.definitions.map((definition) => definition.tool)).toEqual(tools.definitions.map((definition) => definition.tool));
  });

  it('finds nothing for a name outside the catalog', () => {
    expect(tools.find('create_token')).toBeUndefined();
    expect(tools.find('__proto__')).toBeUndefined();
  });

  it('refuses at load a capability whose output is not a JSON object, which MCP cannot carry', () => {
    const listOfNames = defineCapability({
      name: 'list_names', title: 'x', description: 'x', permission: 'services:read', target: { kind: 'team' },
      input: () => z.strictObject({}), output: () => z.array(z.string()), http: { method: 'GET', path: '/api/names', status: 200 },
      hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false }, errors: [], run: async () => [],
    }) as unknown as Capability;
    expect(() => buildToolCatalog([listOfNames])).toThrow(CatalogError);
  });

  it('matches the committed tools/list snapshot (review changes to the public surface like code)', async () => {
    const listed = tools.definitions.map((definition) => definition.tool);
    await expect(JSON.stringify(listed, null, 2) + '\n').toMatchFileSnapshot('./snapshots/tools-list.json');
  });
});

/** A schema with each `$ref` to its own `$defs` replaced by the piece it names (shared-pieces.ts). */
function inlined(schema: Record<string, unknown>): Record<string, unknown> {
  const { $defs: defs = {}, ...rest } = schema as { $defs?: Record<string, unknown> };
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve);
    if (typeof node !== 'object' || node === null) return node;
    const ref = (node as { $ref?: string }).$ref;
    if (ref !== undefined) return resolve(defs[ref.replace('#/$defs/', '')]);
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolve(value)]));
  };
  return resolve(rest) as Record<string, unknown>;
}
