// The OpenAPI document: valid OpenAPI 3.1 by a real validator, committed as a snapshot so the
// public surface never changes silently, and true: every documented operation answers with a
// status the document lists.
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog } from '../../tools/index.js';
import { addHistory, requestFor, sampleInput, type SeededWithHistory } from '../support/catalog-samples.js';
import { makeToken, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';

describe('GET /docs/api.json', () => {
  let server: TestServer;
  let document: Record<string, any>;
  beforeAll(async () => {
    server = await startTestServer();
    const response = await fetch(`${server.baseUrl}/docs/api.json`);
    expect(response.status).toBe(200);
    document = (await response.json()) as Record<string, any>;
  });
  afterAll(async () => { await server.close(); });

  it('is served without a token as JSON', async () => {
    const response = await fetch(`${server.baseUrl}/docs/api.json`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('matches the committed snapshot', async () => {
    await expect(JSON.stringify(document, null, 2) + '\n').toMatchFileSnapshot('../snapshots/openapi.json');
  });

  it('documents every capability with its permission and error responses', () => {
    for (const capability of catalog) {
      const operation = document.paths[capability.http.path]?.[capability.http.method.toLowerCase()];
      expect(operation, capability.name).toBeDefined();
      expect(operation.operationId).toBe(capability.name);
      expect(operation['x-permission']).toBe(capability.permission);
      expect(Object.keys(operation.responses)).toContain('401');
      if (capability.permission) expect(operation.responses['403'].content['application/problem+json']).toBeDefined();
    }
  });

  it('answers every documented operation, with a valid token, with a status the document lists', async () => {
    const team: SeededWithHistory = await addHistory(server.app, await seedTeam(server.app));
    const token = await makeToken(server.app, team.teamId);
    for (const capability of catalog) {
      const { path, body } = requestFor(capability, sampleInput(capability, team));
      const response = await fetch(server.baseUrl + path, {
        method: capability.http.method,
        headers: { Authorization: `Bearer ${token.value}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body,
      });
      const listed = Object.keys(document.paths[capability.http.path][capability.http.method.toLowerCase()].responses);
      expect(listed, `${capability.name} answered ${response.status}`).toContain(String(response.status));
    }
  });

  it('serves interactive documentation from local files, with no CDN', async () => {
    const page = await (await fetch(`${server.baseUrl}/docs`)).text();
    expect(page).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(page).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${server.baseUrl}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});
