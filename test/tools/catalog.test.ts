// The catalog's own rules, checked over every capability, so a new one cannot slip past them.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { CatalogError, defineCapability } from '../../src/core/capability.js';
import { PERMISSION_IDS } from '../../src/auth/permissions.js';
import { catalog } from '../../tools/index.js';

const minimal = {
  title: 'x', description: 'x', target: { kind: 'team' } as const, input: () => z.strictObject({}), output: () => z.object({}),
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false }, errors: [] as const,
  run: async () => ({}),
};

describe('capability catalog', () => {
  it('has unique names, which are snake_case', () => {
    const names = catalog.map((capability) => capability.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  it('has one capability per method and path', () => {
    const routes = catalog.map((capability) => `${capability.http.method} ${capability.http.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('keeps the spec\'s path for listing ERP services', () => {
    expect(catalog.find((capability) => capability.name === 'list_erp_services')?.http).toMatchObject({ method: 'GET', path: '/api/service-erp' });
  });

  it('declares every path parameter as an input field', () => {
    for (const capability of catalog) {
      for (const match of capability.http.path.matchAll(/\{([^}]+)\}/g)) {
        expect(Object.keys(capability.input.shape), capability.name).toContain(match[1]);
      }
    }
  });

  it('states every hint explicitly as a boolean', () => {
    for (const capability of catalog) {
      for (const hint of ['readOnly', 'destructive', 'idempotent', 'openWorld'] as const) {
        expect(typeof capability.hints[hint], `${capability.name}.${hint}`).toBe('boolean');
      }
      expect(capability.hints.readOnly, capability.name).toBe(capability.http.method === 'GET');
    }
  });

  it('names a known permission, or null only for reading the calling token', () => {
    for (const capability of catalog) {
      if (capability.permission === null) expect(capability.target.kind, capability.name).toBe('caller');
      else expect(PERMISSION_IDS).toContain(capability.permission);
    }
  });

  it('writes a title and a description for each capability', () => {
    for (const capability of catalog) {
      expect(capability.title.length, capability.name).toBeGreaterThan(3);
      expect(capability.description.length, capability.name).toBeGreaterThan(20);
    }
  });

  it('refuses a token-management capability at load time', () => {
    const attempts = [
      { name: 'create_token', permission: 'services:write' as const, http: { method: 'POST' as const, path: '/api/tokens', status: 201 } },
      { name: 'revoke_api_token', permission: 'services:write' as const, http: { method: 'DELETE' as const, path: '/api/x/{id}', status: 204 } },
      { name: 'list_tokens', permission: 'services:read' as const, http: { method: 'GET' as const, path: '/api/tokens', status: 200 } },
      { name: 'update_access', permission: 'services:write' as const, http: { method: 'PATCH' as const, path: '/api/token', status: 200 } },
    ];
    for (const attempt of attempts) {
      expect(() => defineCapability({ ...minimal, ...attempt } as never), attempt.name).toThrow(CatalogError);
      expect(() => defineCapability({ ...minimal, ...attempt } as never), attempt.name).toThrow(/API Tokens page of the panel/);
    }
  });

  it('refuses a path parameter missing from the input, when the input is built', () => {
    const getThing = defineCapability({
      ...minimal, name: 'get_thing', permission: 'services:read', http: { method: 'GET', path: '/api/things/{thing_id}', status: 200 },
    });
    expect(() => getThing.input).toThrow(/path parameter \{thing_id\}/);
  });

  it('refuses a target field missing from the input, when the input is built', () => {
    const getThing = defineCapability({
      ...minimal, name: 'get_thing', permission: 'services:read', target: { kind: 'service', from: 'service_id' },
      http: { method: 'GET', path: '/api/things', status: 200 },
    });
    expect(() => getThing.input).toThrow(/target field service_id/);
  });

  it('builds each schema on its first read, once, and gives the same object after', () => {
    let builds = 0;
    const input = z.strictObject({ service_id: z.string() });
    const getThing = defineCapability({
      ...minimal, name: 'get_thing', permission: 'services:read', target: { kind: 'service', from: 'service_id' },
      http: { method: 'GET', path: '/api/things/{service_id}', status: 200 }, input: () => { builds++; return input; },
    });
    expect(builds).toBe(0);
    expect(getThing.input).toBe(input);
    expect(getThing.input).toBe(input);
    expect(builds).toBe(1);
  });

  it('gives every capability of the catalog the same schema objects at each read', () => {
    for (const capability of catalog) {
      expect(capability.input, capability.name).toBe(capability.input);
      expect(capability.output, capability.name).toBe(capability.output);
    }
  });

  it('refuses at load time an action destructive with some inputs that does not have the destructive hint', () => {
    const destructiveWhen = { permission: 'backups:delete' as const, applies: async () => true };
    expect(() => defineCapability({
      ...minimal, name: 'set_thing', permission: 'backups:create', destructiveWhen, http: { method: 'PUT', path: '/api/things', status: 200 },
    })).toThrow(/has the destructive hint/);
    expect(() => defineCapability({
      ...minimal, name: 'set_thing', permission: 'backups:create', destructiveWhen, hints: { ...minimal.hints, destructive: true },
      http: { method: 'PUT', path: '/api/things', status: 200 },
    })).not.toThrow();
  });

  it('refuses at load time an approvable action whose answer does not match how it waits', () => {
    const onOne = { target: { kind: 'service' as const, from: 'service_id' }, input: () => z.strictObject({ service_id: z.string() }) };
    // Answered at once, it names the operation that waits; answered 202, it queues one.
    expect(() => defineCapability({
      ...minimal, ...onOne, name: 'set_thing', permission: 'services:write', approvable: { queues: 'stop' },
      http: { method: 'PUT', path: '/api/things/{service_id}', status: 200 },
    })).toThrow(/can need approval/);
    expect(() => defineCapability({
      ...minimal, ...onOne, name: 'stop_thing', permission: 'services:operate', approvable: { heldAs: 'set_backup_schedule' },
      http: { method: 'POST', path: '/api/things/{service_id}/stop', status: 202 },
    })).toThrow(/can need approval/);
  });

  it('refuses at load time a capability open to its requester when it does not read operations', () => {
    // Only the operations' queries narrow to what the token requested; a list of servers would not.
    expect(() => defineCapability({
      ...minimal, name: 'list_things', permission: 'servers:read', readableByRequester: true,
      hints: { ...minimal.hints, readOnly: true }, http: { method: 'GET', path: '/api/servers', status: 200 },
    })).toThrow(/only reading operations is open to the token that requested them/);
    expect(() => defineCapability({
      ...minimal, name: 'retry_operation', permission: 'services:operate', readableByRequester: true,
      hints: { ...minimal.hints, readOnly: false }, http: { method: 'POST', path: '/api/operations/retry', status: 202 },
    })).toThrow(CatalogError);
  });
});
