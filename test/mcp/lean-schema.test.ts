// The schemas tools/list shows are leaner than the OpenAPI ones, never stricter: every answer a
// capability gives still validates against what its tool declares (clients check
// structuredContent with it), and what the model reads keeps names, types, enums and nulls.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonSchemaOf } from '../../src/channel-neutral/json-schema.js';
import { leanInputSchema, leanOutputSchema, vocabularyOnce } from '../../src/mcp/lean-schema.js';
import { buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { catalog } from '../../tools/index.js';

const ajv = new Ajv2020({ strict: false });
const at = '2026-11-25T10:00:00.000Z';
const operation = {
  id: 'op_aaaaaaaaaaaaaaaaaaaa', kind: 'start', state: 'failed', reason: 'The service did not answer.', service_id: 'svc_aaaaaaaaaaaaaaaaaaaa',
  server_id: null, requested_channel: 'mcp', created_at: at, started_at: at, finished_at: at, backup_id: null, decision_id: null,
  result: { initial_credentials: { login: 'admin', password: 'x' } },
};
const service = {
  id: 'svc_aaaaaaaaaaaaaaaaaaaa', name: 'Production ERP', server_id: 'srv_aaaaaaaaaaaaaaaaaaaa', parent_id: null, is_copy: false,
  state: 'running', revision: 3, url: 'http://127.0.0.1:20000/', created_at: at, updated_at: at,
};

describe('the lean schemas of tools/list', () => {
  const tools = buildToolCatalog(catalog);
  const outputOf = (name: string) => tools.find(name)!.tool.outputSchema!;

  it('accept the answers the full schemas accept: an operation, a page of services, an unfinished operation', () => {
    for (const name of ['start_erp_service', 'get_operation', 'create_backup']) {
      expect(ajv.validate(outputOf(name), operation), name).toBe(true);
      expect(ajv.validate(outputOf(name), { ...operation, state: 'running', reason: null, result: null }), name).toBe(true);
    }
    expect(ajv.validate(outputOf('list_erp_services'), { data: [service, { ...service, url: null }], next_cursor: null })).toBe(true);
    expect(ajv.validate(outputOf('get_erp_service'), service)).toBe(true);
  });

  it('still refuse an answer of the wrong shape: a state outside the enum, a string where null or a number belongs', () => {
    expect(ajv.validate(outputOf('get_operation'), { ...operation, state: 'exploded' })).toBe(false);
    expect(ajv.validate(outputOf('get_erp_service'), { ...service, revision: 'three' })).toBe(false);
    expect(ajv.validate(outputOf('list_erp_services'), { data: [], next_cursor: 5 })).toBe(false);
  });

  it('keep names, types, enums and nulls, and leave out descriptions, patterns, bounds and required lists', () => {
    const schema = leanOutputSchema(jsonSchemaOf(z.object({
      id: z.string().regex(/^x_[a-z]+$/).describe('an id'),
      count: z.number().int().min(0),
      state: z.enum(['on', 'off']),
      note: z.string().nullable().describe('Why.'),
    }), 'output'));
    expect(schema).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string' }, count: { type: 'integer' }, state: { enum: ['on', 'off'] },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
    });
  });

  it('give a long enum by its type only, since the answer shows its values', () => {
    const values = Array.from({ length: 11 }, (_, index) => `p${index}`) as [string, ...string[]];
    expect(leanOutputSchema(jsonSchemaOf(z.object({ p: z.array(z.enum(values)) }), 'output')))
      .toEqual({ type: 'object', properties: { p: { items: { type: 'string' } } } });
  });

  it('leave out the patterns of ids and additionalProperties from an input, keeping its bounds, defaults and required list', () => {
    const input = leanInputSchema(jsonSchemaOf(z.strictObject({
      service_id: z.string().regex(/^svc_[0-9a-z]{20}$/), code: z.string().regex(/^[A-Z]{3}$/), limit: z.number().int().min(1).max(9).default(5),
    }), 'input'));
    expect(input).toEqual({
      type: 'object',
      properties: { service_id: { type: 'string' }, code: { type: 'string', pattern: '^[A-Z]{3}$' }, limit: { type: 'integer', minimum: 1, maximum: 9, default: 5 } },
      required: ['service_id', 'code'],
    });
  });

  it('leave out a long pattern where the field says its form in words, and keep it where it does not', () => {
    const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
    const input = leanInputSchema(jsonSchemaOf(z.strictObject({
      since: z.string().regex(iso).describe('From this date or ISO 8601 time.'), until: z.string().regex(iso),
    }), 'input'));
    const properties = input.properties as Record<string, object>;
    expect(properties.since).toEqual({ type: 'string', description: 'From this date or ISO 8601 time.' });
    expect(properties.until).toHaveProperty('pattern', iso.source);
  });

  it('declare a long vocabulary in the first answer that has it, and its type alone in the next ones', () => {
    const states = z.enum(['a', 'b', 'c', 'd', 'e']);
    const seen = new Set<string>();
    const first = vocabularyOnce(leanOutputSchema(jsonSchemaOf(z.object({ state: states, kind: z.enum(['x', 'y']) }), 'output')), seen);
    const second = vocabularyOnce(leanOutputSchema(jsonSchemaOf(z.object({ state: states, kind: z.enum(['x', 'y']) }), 'output')), seen);
    expect(first.properties).toEqual({ state: { enum: ['a', 'b', 'c', 'd', 'e'] }, kind: { enum: ['x', 'y'] } });
    expect(second.properties).toEqual({ state: { type: 'string' }, kind: { enum: ['x', 'y'] } });
  });

  it('declare a write\'s answer whole when it is not a resource with an id and a state', () => {
    const fullOf = (capability: (typeof tools.definitions)[number]['capability']) => leanOutputSchema(jsonSchemaOf(capability.output, 'output'));
    for (const [index, { capability, tool }] of tools.definitions.entries()) {
      const full = fullOf(capability);
      const members = Object.keys((full.properties ?? {}) as object);
      if (capability.hints.readOnly || (members.includes('id') && members.includes('state'))) continue;
      // Whole, but for a large piece an earlier answer declared (a mail relay, a service's domains): its type alone.
      const declared = (tool.outputSchema!.properties ?? {}) as Record<string, object>;
      expect(Object.keys(declared), capability.name).toEqual(members);
      // Or named, member by member, when an earlier tool declared that very answer whole.
      if (Object.values(declared).every((piece) => JSON.stringify(piece) === '{}')) {
        const earlier = tools.definitions.slice(0, index).some((definition) => JSON.stringify(fullOf(definition.capability)) === JSON.stringify(full));
        expect(earlier, capability.name).toBe(true);
        continue;
      }
      for (const [name, piece] of Object.entries(full.properties as Record<string, object>)) {
        if (JSON.stringify(declared[name]) !== JSON.stringify(piece)) expect(JSON.stringify(declared[name]), `${capability.name}.${name}`).toMatch(/^\{"(type|anyOf)":("(array|object)"|\[\{"type":"(array|object)"\},\{"type":"null"\}\])\}$/);
      }
    }
  });

  it('name a later page\'s next_cursor, which the catalog\'s first page declares, and still accept its answers', () => {
    expect((outputOf('list_erp_services').properties as Record<string, unknown>).next_cursor).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect((outputOf('list_servers').properties as Record<string, unknown>).next_cursor).toEqual({});
    for (const cursor of [null, 'c_abc']) expect(ajv.validate(outputOf('list_servers'), { data: [], next_cursor: cursor })).toBe(true);
  });

  it('name the members of a write\'s answer that a read declared whole before it', () => {
    const schedule = outputOf('get_backup_schedule');
    const members = Object.keys(schedule.properties!);
    expect(outputOf('set_backup_schedule').properties).toEqual(Object.fromEntries(members.map((name) => [name, {}])));
    const answer = { service_id: 'svc_aaaaaaaaaaaaaaaaaaaa', frequency: 'daily', time: '02:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6, next_run_at: null };
    expect(ajv.validate(schedule, answer)).toBe(true);
    expect(ajv.validate(outputOf('set_backup_schedule'), answer)).toBe(true);
  });
});
