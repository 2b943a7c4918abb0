// Nullable fields as anyOf with {"type": "null"}, never a type array (MCP Inspector --strict), in
// every schema we publish: tools/list and the OpenAPI document.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { buildOpenApiDocument } from '../../src/http/openapi.js';
import { jsonSchemaOf } from '../../src/channel-neutral/json-schema.js';
import { nullableAsAnyOf } from '../../src/channel-neutral/nullable-as-any-of.js';
import { catalog } from '../../tools/index.js';

/** JSON pointers of every `type` that is an array. */
function typeArraysIn(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((entry, index) => typeArraysIn(entry, `${at}/${index}`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    (key === 'type' && Array.isArray(inner) ? [`${at}/type`] : typeArraysIn(inner, `${at}/${key}`)));
}

describe('nullable fields', () => {
  it('are never a type array in tools/list or the OpenAPI document, where zod writes ["string", "null"]', () => {
    const tools = buildToolCatalog(catalog).definitions.map((definition) => definition.tool);
    expect(typeArraysIn(tools)).toEqual([]);
    expect(typeArraysIn(buildOpenApiDocument(catalog))).toEqual([]);
  });

  it('keep the description beside anyOf and the constraints in the non-null branch', () => {
    const schema = jsonSchemaOf(z.object({ cursor: z.string().max(200).nullable().describe('The next page.') }), 'output');
    expect((schema.properties as Record<string, unknown>).cursor).toEqual({
      description: 'The next page.', anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }],
    });
  });

  it('accept and refuse the same values as the type array did', () => {
    const ajv = new Ajv2020({ strict: false });
    const before = { type: 'object', properties: { n: { type: ['integer', 'null'], minimum: 1 } }, required: ['n'] };
    const after = nullableAsAnyOf(before) as object;
    for (const value of [{ n: null }, { n: 3 }, { n: 0 }, { n: 'x' }, {}]) {
      expect(ajv.validate(after, value), JSON.stringify(value)).toBe(ajv.validate(before, value));
    }
  });
});
