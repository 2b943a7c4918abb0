// An output schema writes a piece it repeats once, under $defs, where that makes it shorter, and
// still accepts and refuses what it did: clients validate structuredContent with it (the SDK's
// own validator is used here, as a client built on it does after tools/list).
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { withSharedPieces } from '../../src/mcp/shared-pieces.js';
import { buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { catalog } from '../../tools/index.js';

const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] };
const nullableNumber = { anyOf: [{ type: 'number' }, { type: 'null' }] };
const ajv = new Ajv2020({ strict: false });

describe('withSharedPieces', () => {
  const schema = {
    type: 'object',
    properties: {
      reason: nullableString, started_at: nullableString, finished_at: nullableString,
      steps: { type: 'array', items: { type: 'object', properties: { detail: nullableString, ms: nullableNumber } } },
      size: nullableNumber,
    },
  };
  const shared = withSharedPieces(schema);

  it('writes a nullable string met four times once, as $defs.s, and is shorter for it', () => {
    expect(shared.$defs).toEqual({ s: nullableString });
    expect((shared.properties as Record<string, unknown>).reason).toEqual({ $ref: '#/$defs/s' });
    expect(JSON.stringify(shared).length).toBeLessThan(JSON.stringify(schema).length);
  });

  it('leaves a piece met twice where its definition would cost more than it saves', () => {
    expect((shared.properties as Record<string, unknown>).size).toEqual(nullableNumber);
    expect(withSharedPieces({ type: 'object', properties: { a: nullableString, b: nullableString } }))
      .toEqual({ type: 'object', properties: { a: nullableString, b: nullableString } });
  });

  it('accepts and refuses exactly what the schema it shortens does', () => {
    const answers = [
      { reason: null, started_at: 'x', finished_at: null, steps: [{ detail: null, ms: 3 }], size: null },
      { reason: 'x', steps: [{ detail: 'y' }] },
      { reason: 3 },
      { steps: [{ detail: false }] },
      { size: 'big' },
    ];
    for (const answer of answers) expect(ajv.validate(shared, answer), JSON.stringify(answer)).toBe(ajv.validate(schema, answer));
  });
});

describe('the output schemas of tools/list', () => {
  const tools = buildToolCatalog(catalog).definitions.map((definition) => definition.tool);

  it('name with each $ref a piece of their own $defs, never another document', () => {
    for (const tool of tools) {
      const text = JSON.stringify(tool.outputSchema);
      const defs = Object.keys((tool.outputSchema as { $defs?: object }).$defs ?? {});
      for (const [, name] of text.matchAll(/"\$ref":"#\/\$defs\/([a-z0-9]+)"/g)) expect(defs, tool.name).toContain(name);
      expect(text.match(/"\$ref"/g)?.length ?? 0, tool.name).toBe([...text.matchAll(/"\$ref":"#\/\$defs\//g)].length);
    }
  });

  it('share the nullable strings of an operation, and the SDK client\'s validator checks an answer with them', () => {
    const getOperation = tools.find((tool) => tool.name === 'get_operation')!;
    expect(getOperation.outputSchema!.$defs).toEqual({ s: nullableString });
    const validate = new AjvJsonSchemaValidator().getValidator(getOperation.outputSchema as Record<string, unknown>);
    const at = '2026-11-25T10:00:00.000Z';
    const operation = {
      id: 'op_aaaaaaaaaaaaaaaaaaaa', kind: 'start', state: 'failed', reason: 'The service did not answer.', service_id: null,
      server_id: null, requested_channel: 'mcp', created_at: at, started_at: at, finished_at: at, backup_id: null, decision_id: null,
      result: null, steps: [{ step: 'start', at, duration_ms: 5, outcome: 'failed', detail: null }],
    };
    expect(validate(operation).valid).toBe(true);
    expect(validate({ ...operation, reason: 42 }).valid).toBe(false);
    expect(validate({ ...operation, steps: [{ ...operation.steps[0], detail: 7 }] }).valid).toBe(false);
  });
});
