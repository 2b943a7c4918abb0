// A capability's input or output as the JSON Schema both channels publish: the OpenAPI document
// (src/http/openapi.ts) and the MCP tools (src/mcp/tool-definitions.ts), from one conversion.
import { z } from 'zod';
import { nullableAsAnyOf } from './nullable-as-any-of.js';

export type JsonSchema = Record<string, unknown>;

export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
  return nullableAsAnyOf(rest) as JsonSchema;
}
